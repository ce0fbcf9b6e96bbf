MATCH (p:Actor {name: 'Keanu Reeves'})-[:ACTED_IN]->(m) RETURN count(m)
