SELECT SUM(units * price) FROM sales;
