"""Multi-agent text games on PettingZoo, and their single-agent views."""
