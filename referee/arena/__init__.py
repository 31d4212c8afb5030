"""The arena: a standing, rated competition that bots join, play in and leave on their own."""
