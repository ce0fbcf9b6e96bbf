```sql
SELECT region, ROUND(SUM(amount), 2) AS revenue
FROM orders
GROUP BY region;
```
