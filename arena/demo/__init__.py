"""The demo leaderboard: which scripted runs fill it, and their results recorded on GPUs."""
