"""Conversations: chat transcripts as input to the conversation metrics (no pytest, no judge)."""
