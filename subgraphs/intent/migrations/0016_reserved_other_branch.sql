-- Placeholder: intent migration 0016 belongs to another branch of issues #17/#18 (the migrator wants
-- contiguous versions, so this branch's 0019 can run). Drop this file at merge.
SELECT 1;
