#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use catalog_framework::prelude::*;
use catalog_plugin_schema::DefaultDatasetSchema;

register_plugin!("example_dataset_type");

/// The dataset type this schema validates: clients send `"type": "survey"`.
pub const SURVEY_TYPE: &str = "survey";

/// The extra field every survey must have.
pub const SURVEY_YEAR: &str = "survey_year";

/// The years a survey may have been run in, inclusive.
pub const YEARS: std::ops::RangeInclusive<i64> = 1900..=2100;

/// Datasets of type `survey`: the default checks, plus a required `survey_year`.
pub struct SurveySchema;

impl DatasetSchema for SurveySchema {
    fn validate(&self, data: &mut Params, ctx: &SchemaContext<'_>) -> CkanResult<()> {
        // The default schema keeps only the fields it knows, so take ours out first.
        let survey_year = data.remove(SURVEY_YEAR);
        let mut errors = validation();

        // CKAN's checks on everything else (name, title, resources, tags, extras …), with
        // their messages merged into ours, so that one answer lists every failed field.
        if let Err(e) = DefaultDatasetSchema.validate(data, ctx) {
            if e.kind != ErrorKind::Validation {
                return Err(e);
            }
            for (field, messages) in e.body {
                errors.set(&field, messages);
            }
        }

        let year = match parse_year(survey_year.as_ref()) {
            Ok(year) => Some(year),
            Err(message) => {
                errors.push(SURVEY_YEAR, message);
                None
            }
        };
        if has_survey_year_extra(data) {
            errors.push(SURVEY_YEAR, "Give survey_year as a field, not as an extra");
        }
        errors.finish()?;

        // The core actions store the fields every dataset has; a type's own fields travel
        // as an extra (CKAN's `convert_to_extras`), and `show` turns it back into a field.
        if let Some(year) = year {
            let extra = json!({"key": SURVEY_YEAR, "value": year.to_string()});
            match data.get_mut("extras") {
                Some(Value::Array(extras)) => extras.push(extra),
                _ => {
                    data.insert("extras".into(), json!([extra]));
                }
            }
        }
        Ok(())
    }

    fn show(&self, dict: &mut Params) {
        DefaultDatasetSchema.show(dict);
        // CKAN's `convert_from_extras`: the extra becomes a top-level integer again.
        let mut year = None;
        if let Some(Value::Array(extras)) = dict.get_mut("extras") {
            extras.retain(|e| {
                if e.get("key").and_then(Value::as_str) == Some(SURVEY_YEAR) {
                    year = e.get("value").cloned();
                    false
                } else {
                    true
                }
            });
        }
        if let Some(year) = year {
            let year = parse_year(Some(&year)).map_or(year, |y| json!(y));
            dict.insert(SURVEY_YEAR.into(), year);
        }
    }
}

register_dataset_schema!("survey", SurveySchema);

/// A year from a JSON number or a string (GET and form parameters are strings), with CKAN's
/// messages.
fn parse_year(value: Option<&Value>) -> Result<i64, String> {
    let year = match value {
        None | Some(Value::Null) => return Err("Missing value".into()),
        Some(Value::String(s)) if s.trim().is_empty() => return Err("Missing value".into()),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(Value::Number(n)) => n.as_i64(),
        Some(_) => None,
    };
    let year = year.ok_or("Invalid integer")?;
    if YEARS.contains(&year) {
        Ok(year)
    } else {
        Err(format!(
            "Must be a year between {} and {}",
            YEARS.start(),
            YEARS.end()
        ))
    }
}

fn has_survey_year_extra(data: &Params) -> bool {
    data.get("extras")
        .and_then(Value::as_array)
        .is_some_and(|extras| {
            extras
                .iter()
                .any(|e| e.get("key").and_then(Value::as_str) == Some(SURVEY_YEAR))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years_are_integers_in_range() {
        assert_eq!(parse_year(Some(&json!(1999))), Ok(1999));
        assert_eq!(parse_year(Some(&json!(" 2100 "))), Ok(2100));
        assert_eq!(parse_year(None), Err("Missing value".into()));
        assert_eq!(parse_year(Some(&json!(""))), Err("Missing value".into()));
        assert_eq!(
            parse_year(Some(&json!("soon"))),
            Err("Invalid integer".into())
        );
        assert_eq!(
            parse_year(Some(&json!(1999.5))),
            Err("Invalid integer".into())
        );
        assert_eq!(
            parse_year(Some(&json!(1899))),
            Err("Must be a year between 1900 and 2100".into())
        );
    }
}
