"""Write attempts that a leading-keyword filter lets through (security row 12), for every warehouse backend."""

HOSTILE = (  # security row 12: writes the leading-keyword filter let through
    "BEGIN DELETE FROM {t} WHERE TRUE; END",
    "IF TRUE THEN DELETE FROM {t} WHERE TRUE; END IF",
    "WITH x AS (SELECT 1) DELETE FROM {t} WHERE TRUE",
    "CALL my_procedure()",
    "EXECUTE IMMEDIATE 'DELETE FROM {t} WHERE TRUE'",
    "CREATE PROCEDURE p() BEGIN DELETE FROM {t} WHERE TRUE; END",
    "/* SELECT */ DELETE FROM {t} WHERE TRUE",
    "SELECT 1; -- comment\nDELETE FROM {t} WHERE TRUE",
    "SELECT ';'; DELETE FROM {t} WHERE TRUE",
    "MERGE INTO {t} USING {t} s ON FALSE WHEN NOT MATCHED THEN INSERT ROW",
    "(DELETE FROM {t} WHERE TRUE)",
)
