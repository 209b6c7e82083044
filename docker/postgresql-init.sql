-- Temporal's visibility database, beside the temporal database that
-- POSTGRES_USER names (compose.yaml); temporal-schema fills both.
CREATE DATABASE temporal_visibility;
