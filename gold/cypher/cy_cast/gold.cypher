MATCH (p:Person)-[r:ACTED_IN]->(:Movie {title: 'The Matrix'}) RETURN p.name, r.roles
