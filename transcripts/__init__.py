"""Agent transcripts: formats/ parses logs, render/ draws pages; both free of Django."""
