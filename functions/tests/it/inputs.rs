//! Inputs, names and record trimming of the steps: the pure parts of `cdkd-functions`
//! (they were unit tests; here they share the one test binary of the crate).

mod export_input {
    use cdkd_core::export::drift::TemplateSource;
    use cdkd_functions::export::*;
    use serde_json::json;

    #[test]
    fn input_reads_the_cli_shape_with_defaults() {
        let i: ExportInput = serde_json::from_value(json!({
            "stack": "App", "stateBucket": "b", "templates": {"App": "cdkd/_runs/r/templates/App.json"}
        }))
        .unwrap();
        assert_eq!(i.state_prefix, "cdkd");
        assert!(!i.dry_run);
        assert_eq!(i.options, ExportOptions::default());
        let o = i.plan_options();
        assert_eq!(o.state_prefix, "cdkd");
        assert_eq!(o.template_source, None);
    }

    #[test]
    fn input_take_over_reads_a_list_one_owner_or_none() {
        let read = |take_over: serde_json::Value| {
            let mut v = json!({"stack": "App", "stateBucket": "b", "templates": {}});
            v["takeOver"] = take_over;
            serde_json::from_value::<ExportInput>(v).unwrap().take_over
        };
        assert_eq!(read(json!(["a", "b"])), vec!["a", "b"]);
        assert_eq!(read(json!("a")), vec!["a"]);
        assert!(read(json!(null)).is_empty());
        let absent: ExportInput =
            serde_json::from_value(json!({"stack": "App", "stateBucket": "b", "templates": {}}))
                .unwrap();
        assert!(absent.take_over.is_empty());
        // None is not written; one owner is written as a string (what a backend of the
        // earlier version reads), several as a list.
        let mut i = absent;
        assert!(serde_json::to_value(&i).unwrap().get("takeOver").is_none());
        i.take_over = vec!["a".into()];
        assert_eq!(serde_json::to_value(&i).unwrap()["takeOver"], json!("a"));
        i.take_over = vec!["a".into(), "b".into()];
        assert_eq!(
            serde_json::to_value(&i).unwrap()["takeOver"],
            json!(["a", "b"])
        );
    }

    #[test]
    fn input_takes_every_option_and_prefix_as_an_alias() {
        let i: ExportInput = serde_json::from_value(json!({
            "stack": "App", "stackRegion": "eu-west-1", "stateBucket": "b", "prefix": "p",
            "templates": {}, "dryRun": true,
            "options": {"includeNonImportable": true, "noRecreateImportUnsupported": true,
                        "skipImportSupportPreflight": true, "strictCrossStack": true, "cfnStackName": "Dest",
                        "cfnChildStackNames": ["App~C=Child"], "parameters": ["K=V"],
                        "templateSource": "file"}
        }))
        .unwrap();
        let o = i.plan_options();
        assert!(o.dry_run && o.include_non_importable && o.no_recreate_import_unsupported);
        assert!(o.skip_import_support_preflight);
        assert!(i.options.strict_cross_stack);
        assert_eq!(o.cfn_stack_name.as_deref(), Some("Dest"));
        assert_eq!(o.cfn_child_stack_names, vec!["App~C=Child"]);
        assert_eq!(o.parameters, vec!["K=V"]);
        assert_eq!(o.template_source, Some(TemplateSource::File));
        assert_eq!(o.state_prefix, "p");
        assert_eq!(plan_key("p", "r1"), "p/_runs/r1/plan.json");
    }
}

mod step_names {
    use cdkd_functions::steps::*;

    #[test]
    fn a_handler_names_a_step_or_nothing() {
        for (step, _) in STEPS {
            assert_eq!(step_named(step), Some(*step));
        }
        assert_eq!(step_named("bootstrap"), None);
        assert_eq!(step_named(""), None);
    }

    #[test]
    fn every_substitution_in_the_definitions_names_a_step() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../statemachines");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if !path.to_string_lossy().ends_with(".asl.json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for part in text.split("${").skip(1) {
                let name = &part[..part.find('}').unwrap()];
                if name.ends_with("FunctionArn") {
                    assert!(
                        step_for_substitution(name).is_some(),
                        "{}: ${{{name}}} names no step",
                        path.display()
                    );
                }
            }
        }
    }
}

mod cleanup_input {
    use cdkd_core::cleanup::SkipReason;
    use cdkd_functions::cleanup::*;
    use serde_json::json;

    #[test]
    fn input_regions_accept_a_comma_separated_string_or_an_array() {
        let a: CleanupInput = serde_json::from_value(json!({
            "stateBucket": "b", "pattern": "pr-*", "minimumAge": "7d",
            "regions": "us-east-1, eu-west-1,", "dryRun": "true"
        }))
        .unwrap();
        assert_eq!(a.regions, vec!["us-east-1", "eu-west-1"]);
        assert!(a.dry_run);
        assert_eq!(a.state_prefix, "cdkd");
        let b: CleanupInput = serde_json::from_value(json!({
            "stateBucket": "b", "pattern": "pr-*", "minimumAge": "7d",
            "regions": ["us-east-1"], "dryRun": false
        }))
        .unwrap();
        assert_eq!(b.regions, vec!["us-east-1"]);
        assert!(!b.dry_run);
        let c: CleanupInput = serde_json::from_value(
            json!({"stateBucket": "b", "pattern": "*", "minimumAge": "1d", "regions": ""}),
        )
        .unwrap();
        assert!(c.regions.is_empty());
    }

    #[test]
    fn input_dry_run_refuses_other_words() {
        let r: Result<CleanupInput, _> = serde_json::from_value(json!({
            "stateBucket": "b", "pattern": "*", "minimumAge": "1d", "dryRun": "maybe"
        }));
        assert!(r.is_err());
    }

    #[test]
    fn skipped_stack_serializes_reason_flat() {
        let s = SkippedStack {
            stack: "pr-1".into(),
            stack_region: Some("eu-west-1".into()),
            reason: SkipReason::Locked,
        };
        assert_eq!(
            serde_json::to_value(s).unwrap(),
            json!({"stack": "pr-1", "stackRegion": "eu-west-1", "reason": "locked"})
        );
    }
}

mod destroy_record {
    use cdkd_core::state::StateRecord;
    use cdkd_functions::destroy::record::*;
    use serde_json::json;
    use serde_json::Value;

    fn rec(v: Value) -> StateRecord {
        StateRecord::from_body(v.as_object().cloned().unwrap())
    }

    #[test]
    fn incremental_snapshot_drops_deleted_records_clears_outputs_and_imports() {
        let r = rec(json!({
            "version": 10, "stackName": "S", "region": "us-east-1",
            "resources": {"A": {"resourceType": "AWS::SNS::Topic"}, "B": {"resourceType": "AWS::SQS::Queue"}},
            "outputs": {"X": 1}, "imports": [{"sourceStack": "P"}], "outputReads": [],
            "exportNames": ["X"], "orphans": [{"logicalId": "O"}], "futureField": true
        }));
        let t = trimmed(&r, &["A".to_string()]);
        assert_eq!(
            Value::Object(t.body),
            json!({
                "version": 10, "stackName": "S", "region": "us-east-1",
                "resources": {"B": {"resourceType": "AWS::SQS::Queue"}},
                "outputs": {}, "exportNames": ["X"], "orphans": [{"logicalId": "O"}], "futureField": true
            })
        );
    }

    #[test]
    fn incremental_snapshot_never_invents_an_outputs_field() {
        let r = rec(json!({"resources": {"A": {}}}));
        let t = trimmed(&r, &["A".to_string()]);
        assert_eq!(Value::Object(t.body), json!({"resources": {}}));
    }

    #[test]
    fn damaged_resources_bag_is_refused_naming_the_stack() {
        let r = rec(json!({"resources": [1, 2]}));
        let e = resources_of("Shop", "us-east-1", &r).unwrap_err();
        assert_eq!(e.name, "Refused");
        assert!(
            e.message.contains("Stack 'Shop' (us-east-1)"),
            "{}",
            e.message
        );
    }
}
