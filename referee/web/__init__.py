"""The web face: the referee's live matches in a browser, served by the referee's own process."""
