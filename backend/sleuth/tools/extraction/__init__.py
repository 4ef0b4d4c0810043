"""One extraction module for web pages and local files: HTML and PDF to title and text."""
