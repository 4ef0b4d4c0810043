"""Small helpers shared by every layer; they import nothing else from Sleuth."""
