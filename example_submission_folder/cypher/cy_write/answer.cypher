MATCH (m:Movie) SET m.rating = 10 RETURN avg(m.rating)
