"""Pure computation: numpy and torch only, never Qt."""
