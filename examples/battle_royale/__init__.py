"""AWS's Battle Royale game model: users, games and the players in them, open games on a sparse
native index (scanned for every map, queried for one), past games through an inverted index."""
