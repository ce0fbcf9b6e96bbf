MATCH (p:Person)-[:DIRECTED]->(m:Movie) WHERE m.released = 1999 RETURN p
