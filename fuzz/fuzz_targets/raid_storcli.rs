//! RAID tool output as `dbio check --raid-output` reads it, parsed as Tool::Storcli output,
//! then everything done with the result: the audit rules, merging, and the three renderings.
#![no_main]
use dbio_storage::raid::Tool;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dbio_fuzz::raid_output(Tool::Storcli, data));
