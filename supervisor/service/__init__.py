"""The supervisor loop and its partners, each given the narrow ports it uses."""
