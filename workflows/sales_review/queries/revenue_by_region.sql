-- Revenue by region in {{ year }}, against each region's annual target.
-- `'sales.csv'` is found through the dataset folder (file_search_path); `regions` is a view.
SELECT
  s.region,
  r.manager,
  COUNT(*) AS orders,
  SUM(s.units) AS units,
  ROUND(SUM(s.revenue), 2) AS revenue,
  r.annual_target,
  ROUND(100 * SUM(s.revenue) / r.annual_target, 1) AS pct_of_target
FROM 'sales.csv' AS s
JOIN regions AS r ON r.region = s.region
WHERE year(s.order_date) = {{ year }}
GROUP BY s.region, r.manager, r.annual_target
ORDER BY revenue DESC
