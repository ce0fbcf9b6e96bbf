MATCH (m:Movie) RETURN m.title ORDER BY m.released DESC
