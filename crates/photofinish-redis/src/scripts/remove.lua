-- Removes a member from one board-period. Keys and arguments: `PeriodTarget` and the
-- member, in scripts/read.rs.
return apply_remove(KEYS, ARGV)
