MATCH (p:Person)-[:DIRECTED]->(:Movie {title: 'The Matrix'}) RETURN p
