//! Order of several selected stacks (docs/destroy.md, "Stacks and their order" step 4): every consumer is destroyed
//! before its producers, from each record's `imports[]` and `outputReads[]`
//! (`sourceStack` / `sourceRegion`) restricted to the selected set; ties keep the
//! original order; stacks left on a cycle are appended in original order.

use super::refusals::StackRecord;
use serde_json::Value;

/// Indices into `stacks` in destroy order.
pub fn destroy_order(stacks: &[StackRecord<'_>]) -> Vec<usize> {
    let n = stacks.len();
    // producers[c] = selected stacks that consumer c reads from.
    let mut consumers_left = vec![0usize; n];
    let mut producers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (c, rec) in stacks.iter().enumerate() {
        for field in ["imports", "outputReads"] {
            let Some(list) = rec.body.get(field).and_then(Value::as_array) else {
                continue;
            };
            for entry in list {
                let s = entry.get("sourceStack").and_then(Value::as_str);
                let r = entry.get("sourceRegion").and_then(Value::as_str);
                let Some(p) = stacks
                    .iter()
                    .position(|x| Some(x.stack) == s && Some(x.key_region) == r)
                else {
                    continue;
                };
                if p != c && !producers[c].contains(&p) {
                    producers[c].push(p);
                    consumers_left[p] += 1;
                }
            }
        }
    }
    let mut done = vec![false; n];
    let mut out = Vec::with_capacity(n);
    while let Some(i) = (0..n).find(|&i| !done[i] && consumers_left[i] == 0) {
        done[i] = true;
        out.push(i);
        for &p in &producers[i] {
            consumers_left[p] -= 1;
        }
    }
    out.extend((0..n).filter(|&i| !done[i]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn rec<'a>(stack: &'a str, body: &'a Map<String, Value>) -> StackRecord<'a> {
        StackRecord {
            stack,
            key_region: "us-east-1",
            body,
            divergent_body_region: None,
        }
    }

    #[test]
    fn statement_51_consumer_destroyed_before_producer() {
        let a = json!({}).as_object().unwrap().clone();
        let b = json!({"imports": [{"sourceStack": "A", "sourceRegion": "us-east-1", "exportName": "x"}]})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(destroy_order(&[rec("A", &a), rec("B", &b)]), vec![1, 0]);
    }

    #[test]
    fn output_reads_order_too_and_ties_keep_original_order() {
        let a = json!({}).as_object().unwrap().clone();
        let c = json!({}).as_object().unwrap().clone();
        let b = json!({"outputReads": [{"sourceStack": "A", "sourceRegion": "us-east-1", "outputName": "o"}]})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            destroy_order(&[rec("A", &a), rec("C", &c), rec("B", &b)]),
            vec![1, 2, 0]
        );
    }

    #[test]
    fn other_region_and_unselected_producers_are_ignored() {
        let a = json!({}).as_object().unwrap().clone();
        let b = json!({"imports": [
            {"sourceStack": "A", "sourceRegion": "eu-west-1"},
            {"sourceStack": "Z", "sourceRegion": "us-east-1"}]})
        .as_object()
        .unwrap()
        .clone();
        assert_eq!(destroy_order(&[rec("A", &a), rec("B", &b)]), vec![0, 1]);
    }

    #[test]
    fn cycle_keeps_every_stack_in_original_order() {
        let a = json!({"imports": [{"sourceStack": "B", "sourceRegion": "us-east-1"}]})
            .as_object()
            .unwrap()
            .clone();
        let b = json!({"imports": [{"sourceStack": "A", "sourceRegion": "us-east-1"}]})
            .as_object()
            .unwrap()
            .clone();
        let c = json!({}).as_object().unwrap().clone();
        assert_eq!(
            destroy_order(&[rec("A", &a), rec("B", &b), rec("C", &c)]),
            vec![2, 0, 1]
        );
    }
}
