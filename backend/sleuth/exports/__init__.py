"""A stored report as a standalone document: markdown, PDF and DOCX, all with the same parts in the same order."""
