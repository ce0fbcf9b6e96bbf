CREATE (:Person {name: 'Keanu Reeves', born: 1964});
CREATE (:Person {name: 'Carrie-Anne Moss', born: 1967});
CREATE (:Person {name: 'Lana Wachowski', born: 1965});
CREATE (:Movie {title: 'The Matrix', released: 1999, rating: 8.7});
CREATE (:Movie {title: 'John Wick', released: 2014, rating: 7.4});
MATCH (p:Person {name: 'Keanu Reeves'}), (m:Movie {title: 'The Matrix'}) CREATE (p)-[:ACTED_IN {roles: ['Neo']}]->(m);
MATCH (p:Person {name: 'Keanu Reeves'}), (m:Movie {title: 'John Wick'}) CREATE (p)-[:ACTED_IN {roles: ['John Wick']}]->(m);
MATCH (p:Person {name: 'Carrie-Anne Moss'}), (m:Movie {title: 'The Matrix'}) CREATE (p)-[:ACTED_IN {roles: ['Trinity']}]->(m);
MATCH (p:Person {name: 'Lana Wachowski'}), (m:Movie {title: 'The Matrix'}) CREATE (p)-[:DIRECTED]->(m);
