"""Wie Waldi (Abacusspiele): everybody builds dachshunds at once; see RULES.md."""
