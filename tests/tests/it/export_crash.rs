//! Crash safety of the export workflow's steps, as a deployed run meets it
//! (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): a two-level tree (a root with a queue and one nested
//! child with a topic) driven through the steps as the definition runs them, where at
//! seeded random points a step's invocation dies mid-flight (its future is dropped after
//! a random few milliseconds, as a Lambda timeout or crash does) and the same step is
//! invoked again with the same input (Step Functions' Retry). After every kill, every
//! resource still exists and is listed by its cdkd record or held by a CloudFormation
//! stack; at the end CloudFormation alone holds the tree, every record
//! and lock is gone and the report says migrated.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test e2e -- --test-threads=1 export_crash`.
//! More seeds: `CDKD_FLOW_CRASH_SEEDS=200`.

use std::collections::BTreeMap;
use std::time::Duration;

use cdkd_core::keys::{lock_key, state_key};
use cdkd_functions::export::carry::Carry;
use serde_json::Value;

use crate::export_support::{described, resources, route, tree_seed, Tree, PREFIX, REGION};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*: deterministic per seed.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 33
    }
}

/// Every resource exists and is owned: listed by the record of its stack, or held by the
/// CloudFormation stack it is exported into.
async fn assert_owned(t: &Tree, when: &str) {
    let sdk = cdkd_tests::sdk().await;
    assert!(
        cdkd_tests::fixtures::queue_exists(&sdk, &t.queue_url).await,
        "{when}: the queue was deleted"
    );
    assert!(
        cdkd_tests::fixtures::topic_exists(&sdk, &t.topic).await,
        "{when}: the topic was deleted"
    );
    for (stack, cfn, logical) in [
        (t.root.as_str(), t.root.as_str(), "Queue"),
        (t.child.as_str(), t.child_cfn.as_str(), "Topic"),
    ] {
        let in_record = t
            .json(&state_key(PREFIX, stack, REGION))
            .await
            .is_some_and(|r| r["resources"].get(logical).is_some());
        let in_cfn = described(cfn).await.is_some() && resources(cfn).await.contains_key(logical);
        assert!(
            in_record || in_cfn,
            "{when}: {stack}'s {logical} is owned by neither"
        );
    }
}

/// One step, killed mid-flight at the seed's will and then retried with the same input.
async fn step(
    t: &Tree,
    name: &str,
    payload: Value,
    rng: &mut Rng,
    kills: &mut BTreeMap<String, u32>,
) -> Value {
    if rng.next() % 100 < 35 {
        let after = Duration::from_millis(rng.next() % 40);
        match tokio::time::timeout(after, t.step(name, payload.clone())).await {
            Ok(out) => return out.unwrap_or_else(|e| panic!("{name}: {e:?}")),
            Err(_) => {
                *kills.entry(name.to_string()).or_default() += 1;
                assert_owned(t, &format!("after {name} died mid-flight")).await;
            }
        }
    }
    t.step(name, payload)
        .await
        .unwrap_or_else(|e| panic!("{name} (retried): {e:?}"))
}

#[tokio::test]
async fn export_crash_a_step_dying_mid_invocation_and_retried_loses_nothing() {
    let seeds: u64 = std::env::var("CDKD_FLOW_CRASH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut kills: BTreeMap<String, u32> = BTreeMap::new();
    for seed in 0..seeds {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let t = tree_seed("Crash", 1)
            .await
            .lock(serde_json::json!({"fast": true}))
            .await;
        let mut carry: Carry = t.carry.clone();
        let mut n = 0;
        while let Some(name) = route(carry.next) {
            n += 1;
            assert!(n < 300, "seed {seed}: the run did not settle");
            let out = step(
                &t,
                name,
                serde_json::to_value(&carry).unwrap(),
                &mut rng,
                &mut kills,
            )
            .await;
            carry = serde_json::from_value(out).unwrap();
        }
        let done = step(
            &t,
            "export-cleanup",
            serde_json::to_value(&carry).unwrap(),
            &mut rng,
            &mut kills,
        )
        .await;
        assert_eq!(done["report"]["outcome"], "migrated", "seed {seed}: {done}");
        assert_owned(&t, &format!("seed {seed}, migrated")).await;
        for s in [&t.root, &t.child] {
            assert!(
                t.text(&state_key(PREFIX, s, REGION)).await.is_none(),
                "seed {seed}: {s}'s record is left"
            );
            assert!(
                t.text(&lock_key(PREFIX, s, Some(REGION))).await.is_none(),
                "seed {seed}: {s}'s lock is left"
            );
        }
        assert!(
            resources(&t.root).await.contains_key("Queue"),
            "seed {seed}: the root stack holds the queue"
        );
        assert!(
            resources(&t.child_cfn).await.contains_key("Topic"),
            "seed {seed}: the child stack holds the topic"
        );
    }
    eprintln!("export_crash: {seeds} seeds, steps killed mid-flight and retried {kills:?}, 0 resources lost, 0 locks left");
}
