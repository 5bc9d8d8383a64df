"""Bug reports: reading the environment reports users paste, the one-screen summary, the Markdown report."""
