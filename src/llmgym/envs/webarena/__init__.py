"""WebArena, offline."""
