"""The table controller: panel keys and camera readings in, a refereed game out."""
