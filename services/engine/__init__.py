"""Engine: turn-based play of Willi, Willi Stich and Willi Wacker."""
