"""The layers a save file can have around its values: store_var frames, compression, encryption,
base64, project settings (ECFG), and the atomic file writes they share."""
