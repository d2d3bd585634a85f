"""The text and its tokens: the field the text is typed in, and the strip of chips that
are dragged to reorder them."""
