"""Tools the research agents use: search providers and page readers behind one small interface."""
