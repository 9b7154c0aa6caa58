-- One write, atomically. Keys and arguments: `WriteCall` in scripts/write.rs.
return apply_write(KEYS, ARGV)
