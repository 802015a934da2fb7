"""What a UI or the CLI may know (typed views) and send (typed commands)."""
