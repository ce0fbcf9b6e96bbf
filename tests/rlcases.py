"""Generated SQLite databases and query pairs for the reward tests and the bench.

The databases and queries come from a seeded generator, not from hand-written expected
verdicts: the expected verdict of each pair is computed by an oracle here (a throwaway
copy of the database, plain sqlite3, rows compared as sets), independently of the code
under test.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
import tempfile
from pathlib import Path

REGIONS = ["north", "south", "east", "west", "centre"]
PRODUCTS = ["apple", "pear", "plum", "fig", "kiwi", "lime", "date"]


def make_database(path: Path, seed: int, rows: int = 2000) -> Path:
    rng = random.Random(seed)
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, region TEXT, score REAL);
        CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, product TEXT, qty INTEGER, price REAL);
    """)
    con.executemany(
        "INSERT INTO customer VALUES (?,?,?,?)",
        [
            (i, f"c{i}", rng.choice(REGIONS), round(rng.uniform(0, 100), 2) if rng.random() > 0.05 else None)
            for i in range(rows // 4)
        ],
    )
    con.executemany(
        "INSERT INTO orders VALUES (?,?,?,?,?)",
        [
            (i, rng.randrange(rows // 4), rng.choice(PRODUCTS), rng.randint(1, 9), round(rng.uniform(1, 50), 2))
            for i in range(rows)
        ],
    )
    con.commit()
    con.close()
    return path


def query_pairs(seed: int) -> list[tuple[str, str]]:
    """(gold, prediction) pairs: rewrites that keep the row set, near misses that change it."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(6):
        region, product, qty = rng.choice(REGIONS), rng.choice(PRODUCTS), rng.randint(2, 8)
        gold = f"SELECT id, name FROM customer WHERE region = '{region}'"
        pairs += [
            (gold, f"SELECT id, name FROM customer WHERE region = '{region}' ORDER BY name DESC"),
            (gold, f"SELECT c.id, c.name FROM customer c JOIN customer d ON c.id = d.id WHERE c.region = '{region}'"),
            (gold, f"SELECT name, id FROM customer WHERE region = '{region}'"),  # columns swapped: other tuples
            (gold, f"SELECT id, name FROM customer WHERE region <> '{region}'"),
        ]
        gold = f"SELECT product, sum(qty) FROM orders WHERE qty >= {qty} GROUP BY product"
        pairs += [
            (gold, f"SELECT product, sum(qty) AS n FROM orders WHERE NOT qty < {qty} GROUP BY 1 ORDER BY 2"),
            (gold, f"SELECT product, sum(qty) FROM orders WHERE qty > {qty} GROUP BY product"),
            (gold, f"SELECT product, sum(qty) * 1.0 FROM orders WHERE qty >= {qty} GROUP BY product"),  # 1 == 1.0
        ]
        gold = f"SELECT DISTINCT customer_id FROM orders WHERE product = '{product}'"
        pairs += [
            (gold, f"SELECT customer_id FROM orders WHERE product = '{product}'"),  # duplicates: same set
            (gold, f"SELECT customer_id FROM orders WHERE product = '{product}' AND qty > 100"),
            (gold, f"SELECT CAST(customer_id AS TEXT) FROM orders WHERE product = '{product}'"),  # '1' != 1
        ]
        gold = "SELECT avg(score) FROM customer"
        pairs += [
            (gold, "SELECT avg(score) FROM customer WHERE score IS NOT NULL"),
            (gold, "SELECT sum(score) / count(*) FROM customer"),
        ]  # NULL scores counted: another value
    return pairs


def oracle(database: Path, gold: str, prediction: str) -> float:
    """EX as public reward code computes it, on a private copy with plain sqlite3: the gold first, then the
    prediction inside a transaction that is rolled back; 1.0 when the row sets are equal."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "copy.sqlite"
        shutil.copyfile(database, copy)
        con = sqlite3.connect(copy)
        try:
            expected = set(con.execute(gold).fetchall())
            try:
                predicted = set(con.execute(prediction).fetchall())
            except sqlite3.Error:
                return 0.0
            finally:
                con.rollback()
            return 1.0 if predicted == expected else 0.0
        finally:
            con.close()


def folder_fingerprint(folder: Path) -> dict:
    """Every file of the folder with its bytes' hash: a database and its side files."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(folder).iterdir())}
