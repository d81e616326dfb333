"""Card vision: camera input, table calibration, card reading, play extraction, scenes."""
