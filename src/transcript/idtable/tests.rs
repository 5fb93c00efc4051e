use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone)]
enum Op {
    Get(u16),
    Insert(u16, u64),
    GetOrInsert(u16, u64),
}

fn op(ids: u16) -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..ids).prop_map(Op::Get),
        (0..ids, any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        (0..ids, any::<u64>()).prop_map(|(k, v)| Op::GetOrInsert(k, v)),
    ]
}

fn key(k: u16) -> Digest {
    Digest::of(&format!("toolu_{k}"))
}

/// Runs `ops` on a table spilling every `budget` ids and on a plain map,
/// checking every answer and, at the end, every entry.
fn same_as_a_map(budget: usize, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut table: IdTable<u64> = IdTable::with_budget(budget);
    let mut map: HashMap<Digest, u64> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Get(k) => {
                prop_assert_eq!(
                    table.get(&key(k)).unwrap(),
                    map.get(&key(k)).copied(),
                    "op {}",
                    i
                );
            }
            Op::Insert(k, v) => {
                table.insert(key(k), v).unwrap();
                map.insert(key(k), v);
            }
            Op::GetOrInsert(k, v) => {
                let want = match map.get(&key(k)) {
                    Some(&old) => (old, false),
                    None => {
                        map.insert(key(k), v);
                        (v, true)
                    }
                };
                prop_assert_eq!(
                    table.get_or_insert_with(key(k), || v).unwrap(),
                    want,
                    "op {}",
                    i
                );
            }
        }
    }
    let mut want: Vec<(Digest, u64)> = map.into_iter().collect();
    want.sort();
    prop_assert_eq!(table.entries().unwrap(), want);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Tiny budgets: many spills, merges and filter rebuilds; ids recurring
    /// at any distance, values overwritten after they were spilled.
    #[test]
    fn a_spilling_table_answers_as_a_map(
        budget in 1usize..9,
        ops in proptest::collection::vec(op(300), 0..1500),
    ) {
        same_as_a_map(budget, &ops)?;
    }

    #[test]
    fn a_table_that_never_spills_answers_as_a_map(ops in proptest::collection::vec(op(50), 0..300)) {
        same_as_a_map(BUDGET, &ops)?;
    }
}

#[test]
fn spilled_ids_are_found_at_any_distance_in_logarithmically_many_runs() {
    let mut t: IdTable<u32> = IdTable::with_budget(16);
    for i in 0..5000u32 {
        let (v, new) = t
            .get_or_insert_with(Digest::of(&i.to_string()), || i)
            .unwrap();
        assert_eq!((v, new), (i, true));
    }
    // 5000 / 16 = 312 spills (10320 in base 4), merged four at a time:
    // one run per unit of a base-4 digit.
    assert_eq!(t.runs(), 6);
    for i in (0..5000u32).rev() {
        assert_eq!(t.get(&Digest::of(&i.to_string())).unwrap(), Some(i));
        assert_eq!(t.get(&Digest::of(&format!("x{i}"))).unwrap(), None);
    }
    // A value set after its id was spilled shadows the spilled one, and
    // keeps doing so once the two runs holding it are merged.
    t.insert(Digest::of("7"), 70).unwrap();
    assert_eq!(t.get(&Digest::of("7")).unwrap(), Some(70));
    for i in 5000..6000u32 {
        t.insert(Digest::of(&i.to_string()), i).unwrap();
    }
    assert_eq!(t.get(&Digest::of("7")).unwrap(), Some(70));
    assert_eq!(t.entries().unwrap().len(), 6000);
}

#[test]
fn units_pack_to_nothing_and_numbers_to_their_bytes() {
    let mut t: IdTable<()> = IdTable::with_budget(2);
    for i in 0..10 {
        assert!(t.get_or_insert_with(key(i), || ()).unwrap().1);
    }
    assert!(!t.get_or_insert_with(key(3), || ()).unwrap().1);
    let mut b = [0u8; 8];
    u64::MAX.pack(&mut b);
    assert_eq!(u64::unpack(&b), u64::MAX);
}
