"""The site: pages rendered from the records (`pages`), the MkDocs hooks (`hooks`), the
Pagefind search index (`search`)."""
