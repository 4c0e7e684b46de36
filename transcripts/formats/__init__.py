"""Parsers of agent logs into one schema (Run -> Thread -> Turn -> Event). Plain Python."""
