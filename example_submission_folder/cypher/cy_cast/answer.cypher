MATCH (m:Movie {title: 'The Matrix'})<-[r:ACTED_IN]-(p:Person) RETURN r.roles AS roles, p.name AS actor
