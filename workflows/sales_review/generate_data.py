"""Write the sales review's data: `data/sales.csv` (orders) and `data/regions.csv` (targets).

Deterministic: the standard library's `random` with a fixed seed, so the committed CSVs are
exactly what this script writes. Run it again after changing it:

    python workflows/sales_review/generate_data.py
"""

from __future__ import annotations

import csv
import datetime as dt
import random
from pathlib import Path

SEED = 20240101
ROWS = 2000
YEARS = (2023, 2024)
DATA = Path(__file__).resolve().parent / "data"

REGIONS = {
    # region: (manager, weight of orders, annual revenue target)
    "North": ("Ada Park", 0.32, 240_000),
    "South": ("Ben Ortiz", 0.18, 90_000),
    "East": ("Chloe Nakamura", 0.27, 320_000),
    "West": ("Dev Patel", 0.23, 130_000),
}

PRODUCTS = {
    # product: (category, list price)
    "Laptop": ("Computers", 1150.0),
    "Monitor": ("Computers", 240.0),
    "Keyboard": ("Accessories", 45.0),
    "Mouse": ("Accessories", 25.0),
    "Headset": ("Audio", 85.0),
    "Speaker": ("Audio", 130.0),
}

CHANNELS = ("online", "retail", "partner")

# Each region leans towards some products and channels, so the per-region details differ.
PRODUCT_WEIGHTS = {
    "North": (2, 5, 3, 3, 2, 2),
    "South": (1, 2, 6, 6, 4, 2),
    "East": (3, 2, 2, 2, 2, 2),
    "West": (1, 2, 2, 2, 6, 6),
}
CHANNEL_WEIGHTS = {
    "North": (5, 3, 2),
    "South": (2, 6, 2),
    "East": (3, 3, 4),
    "West": (6, 2, 2),
}


def order_rows(rng: random.Random) -> list[dict[str, object]]:
    """ROWS orders spread over YEARS; 2024 grows a little over 2023."""
    regions = list(REGIONS)
    weights = [REGIONS[r][1] for r in regions]
    products = list(PRODUCTS)
    rows: list[dict[str, object]] = []
    for order_id in range(1, ROWS + 1):
        year = YEARS[0] if rng.random() < 0.46 else YEARS[1]
        day = dt.date(year, 1, 1) + dt.timedelta(days=rng.randrange(365))
        region = rng.choices(regions, weights)[0]
        product = rng.choices(products, PRODUCT_WEIGHTS[region])[0]
        category, price = PRODUCTS[product]
        units = rng.randint(1, 12 if category == "Accessories" else 5)
        discount = rng.choice((0.0, 0.0, 0.0, 0.05, 0.1, 0.15))
        revenue = round(units * price * (1 - discount), 2)
        rows.append(
            {
                "order_id": order_id,
                "order_date": day.isoformat(),
                "region": region,
                "product": product,
                "category": category,
                "channel": rng.choices(CHANNELS, CHANNEL_WEIGHTS[region])[0],
                "units": units,
                "unit_price": f"{price:.2f}",
                "discount": f"{discount:.2f}",
                "revenue": f"{revenue:.2f}",
            }
        )
    rows.sort(key=lambda r: (str(r["order_date"]), int(str(r["order_id"]))))
    return rows


def write_csv(path: Path, rows: list[dict[str, object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    rng = random.Random(SEED)
    DATA.mkdir(parents=True, exist_ok=True)
    write_csv(DATA / "sales.csv", order_rows(rng))
    targets = [
        {"region": region, "manager": manager, "annual_target": target}
        for region, (manager, _weight, target) in REGIONS.items()
    ]
    write_csv(DATA / "regions.csv", targets)
    print(f"wrote {ROWS} orders to {DATA / 'sales.csv'} and {len(targets)} regions")


if __name__ == "__main__":
    main()
