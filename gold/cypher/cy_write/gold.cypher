MATCH (m:Movie) RETURN avg(m.rating)
