//! Reading a tabular file as the loader sees it: the encoding (a BOM, UTF-8, else
//! Windows-1252), the kind (a spreadsheet by its signature, else delimited text with a sniffed
//! delimiter), the header row made into valid field names, and every row checked and typed in
//! a first pass before anything is written. Blocking code: it runs on a blocking thread.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::guess::{ColumnState, Guess};
use crate::types::valid_field_name;

/// Longest field name (PostgreSQL's identifier limit).
const MAX_NAME: usize = 63;
/// Columns a loaded file may have.
pub(crate) const MAX_COLUMNS: usize = 1_000;
/// Bytes looked at to sniff the delimiter.
const SNIFF_BYTES: usize = 64 * 1024;

/// Why a file could not be read; `row`/`line` (1-based, the header is row 0 / line 1) when it
/// is one row's fault.
#[derive(Debug)]
pub(crate) struct ReadError {
    pub(crate) message: String,
    pub(crate) row: Option<u64>,
    pub(crate) line: Option<u64>,
}

impl ReadError {
    fn file(message: impl Into<String>) -> ReadError {
        ReadError {
            message: message.into(),
            row: None,
            line: None,
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.row, self.line) {
            (Some(r), Some(l)) => write!(f, "Row {r} (line {l}): {}", self.message),
            (Some(r), None) => write!(f, "Row {r}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// What the first pass found.
#[derive(Debug)]
pub(crate) struct Survey {
    /// The UTF-8 delimited file the second pass reads (the original or a converted copy).
    pub(crate) path: PathBuf,
    pub(crate) delimiter: u8,
    /// The encoding the file was read as.
    pub(crate) encoding: &'static str,
    pub(crate) columns: Vec<String>,
    pub(crate) types: Vec<Guess>,
    pub(crate) rows: u64,
    /// What the loader logs about how it read the file.
    pub(crate) notes: Vec<String>,
}

/// The kinds of files the loader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Delimited,
    Spreadsheet,
}

/// Reads the file at `path` (format hint `format`, lowercased), converting it into a UTF-8
/// delimited file under `work` when it is not one, and checks and types every row.
/// `spreadsheet_max`: the largest spreadsheet read (a spreadsheet is read whole).
pub(crate) fn survey(
    path: &Path,
    format: &str,
    work: &Path,
    spreadsheet_max: u64,
) -> Result<Survey, ReadError> {
    let mut notes = Vec::new();
    let mut head = [0u8; 8];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| ReadError::file(format!("Could not read the file: {e}")))?;
    let head = &head[..n];
    let kind = if head.starts_with(b"PK\x03\x04") || head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        FileKind::Spreadsheet
    } else {
        FileKind::Delimited
    };
    let (utf8_path, encoding, delimiter) = match kind {
        FileKind::Spreadsheet => {
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            if size > spreadsheet_max {
                return Err(ReadError::file(format!(
                    "The spreadsheet is larger than {spreadsheet_max} bytes; load it as CSV"
                )));
            }
            let out = work.join("sheet.csv");
            spreadsheet_to_csv(path, &out)?;
            notes.push("Read the first sheet of the spreadsheet".to_string());
            (out, "UTF-8", b',')
        }
        FileKind::Delimited => {
            let (p, enc) = to_utf8(path, work)?;
            let delim = if format.contains("tsv") || format.contains("tab") {
                b'\t'
            } else {
                sniff_delimiter(&p)?
            };
            notes.push(format!(
                "Delimiter {}",
                match delim {
                    b'\t' => "tab".to_string(),
                    d => format!("'{}'", d as char),
                }
            ));
            (p, enc, delim)
        }
    };
    let mut reader = csv_reader(&utf8_path, delimiter)?;
    let mut record = csv::StringRecord::new();
    // The header: the first row that is not blank.
    let header = loop {
        match reader.read_record(&mut record) {
            Ok(true) if record.iter().all(|c| c.trim().is_empty()) => continue,
            Ok(true) => break record.clone(),
            Ok(false) => return Err(ReadError::file("No entries found - nothing to load")),
            Err(e) => return Err(csv_error(&e, 0)),
        }
    };
    if header.len() > MAX_COLUMNS {
        return Err(ReadError::file(format!(
            "The file has {} columns; at most {MAX_COLUMNS} are loaded",
            header.len()
        )));
    }
    let columns = field_names(&header, &mut notes);
    let width = columns.len();
    let mut state: Vec<ColumnState> = vec![ColumnState::default(); width];
    let mut rows: u64 = 0;
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(&e, rows + 1)),
        }
        if record.len() != width {
            if record.iter().all(|c| c.trim().is_empty()) {
                continue;
            }
            return Err(ReadError {
                message: format!("has {} fields, but the header has {width}", record.len()),
                row: Some(rows + 1),
                line: record.position().map(csv::Position::line),
            });
        }
        rows += 1;
        for (s, cell) in state.iter_mut().zip(record.iter()) {
            s.see(cell.trim());
        }
    }
    if rows == 0 {
        notes.push("The file has a header but no rows".to_string());
    }
    Ok(Survey {
        path: utf8_path,
        delimiter,
        encoding,
        columns,
        types: state.iter().map(ColumnState::guess).collect(),
        rows,
        notes,
    })
}

/// A reader of the delimited UTF-8 file (the header is read as a row).
pub(crate) fn csv_reader(
    path: &Path,
    delimiter: u8,
) -> Result<csv::Reader<BufReader<File>>, ReadError> {
    let f =
        File::open(path).map_err(|e| ReadError::file(format!("Could not read the file: {e}")))?;
    Ok(csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(BufReader::with_capacity(1 << 16, f)))
}

fn csv_error(e: &csv::Error, row: u64) -> ReadError {
    let line = e.position().map(csv::Position::line);
    let message = match e.kind() {
        csv::ErrorKind::Utf8 { .. } => "is not valid text in the file's encoding".to_string(),
        csv::ErrorKind::Io(io) => format!("could not be read: {io}"),
        _ => e.to_string(),
    };
    ReadError {
        message,
        row: Some(row),
        line,
    }
}

/// Header cells made into field names: trimmed, `"` and leading `_` removed, at most 63
/// characters; empty ones become `field_<n>`, repeated ones get `_<k>`.
fn field_names(header: &csv::StringRecord, notes: &mut Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(header.len());
    for (i, raw) in header.iter().enumerate() {
        let mut name: String = raw
            .trim()
            .trim_start_matches('\u{feff}')
            .chars()
            .filter(|c| *c != '"' && !c.is_control())
            .collect();
        name = name.trim_start_matches('_').trim().to_string();
        if name.chars().count() > MAX_NAME {
            name = name
                .chars()
                .take(MAX_NAME)
                .collect::<String>()
                .trim()
                .to_string();
        }
        if name.is_empty() {
            name = format!("field_{}", i + 1);
        }
        let base = name.clone();
        let mut k = 2;
        while out.iter().any(|o| o == &name) {
            let suffix = format!("_{k}");
            let keep = MAX_NAME.saturating_sub(suffix.len());
            name = format!("{}{suffix}", base.chars().take(keep).collect::<String>());
            k += 1;
        }
        if name != raw {
            notes.push(format!("Column {} \"{raw}\" is named \"{name}\"", i + 1));
        }
        debug_assert!(valid_field_name(&name));
        out.push(name);
    }
    out
}

/// The delimiter that splits the first lines into the same number of fields, most fields
/// first, among `,` `;` tab `|`; `,` when none does.
fn sniff_delimiter(path: &Path) -> Result<u8, ReadError> {
    let mut buf = vec![0u8; SNIFF_BYTES];
    let mut f =
        File::open(path).map_err(|e| ReadError::file(format!("Could not read the file: {e}")))?;
    let mut n = 0;
    while n < buf.len() {
        let k = f
            .read(&mut buf[n..])
            .map_err(|e| ReadError::file(format!("Could not read the file: {e}")))?;
        if k == 0 {
            break;
        }
        n += k;
    }
    buf.truncate(n);
    // Only whole lines.
    if n == SNIFF_BYTES {
        if let Some(last) = buf.iter().rposition(|b| *b == b'\n') {
            buf.truncate(last + 1);
        }
    }
    let mut best = (b',', 0usize);
    for d in [b',', b';', b'\t', b'|'] {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(d)
            .from_reader(buf.as_slice());
        let mut widths = Vec::new();
        for rec in r.records().take(50) {
            match rec {
                Ok(rec) => widths.push(rec.len()),
                Err(_) => break,
            }
        }
        let Some(first) = widths.first().copied() else {
            continue;
        };
        if first > 1 && widths.iter().all(|w| *w == first) && first > best.1 {
            best = (d, first);
        }
    }
    Ok(best.0)
}

/// The file as UTF-8 without a BOM: the file itself when it is that already; else a copy
/// under `work`, converted from UTF-16 (by its BOM) or Windows-1252 (any other bytes that are
/// not UTF-8, as XLoader's fallback).
fn to_utf8(path: &Path, work: &Path) -> Result<(PathBuf, &'static str), ReadError> {
    let io = |e: std::io::Error| ReadError::file(format!("Could not read the file: {e}"));
    let mut f = File::open(path).map_err(io)?;
    let mut bom = [0u8; 3];
    let n = f.read(&mut bom).map_err(io)?;
    let (encoding, skip): (&'static encoding_rs::Encoding, u64) = match &bom[..n] {
        [0xEF, 0xBB, 0xBF] => (encoding_rs::UTF_8, 3),
        [0xFF, 0xFE, ..] => (encoding_rs::UTF_16LE, 2),
        [0xFE, 0xFF, ..] => (encoding_rs::UTF_16BE, 2),
        _ => {
            if is_utf8(path)? {
                return Ok((path.to_path_buf(), "UTF-8"));
            }
            (encoding_rs::WINDOWS_1252, 0)
        }
    };
    if encoding == encoding_rs::UTF_8 && is_utf8_after(path, 3)? {
        // Only the BOM is in the way: copy without it.
        let out = work.join("utf8.csv");
        let mut src = File::open(path).map_err(io)?;
        src.seek(SeekFrom::Start(3)).map_err(io)?;
        let mut dst = BufWriter::new(File::create(&out).map_err(io)?);
        std::io::copy(&mut src, &mut dst).map_err(io)?;
        dst.flush().map_err(io)?;
        return Ok((out, "UTF-8"));
    }
    let encoding = if encoding == encoding_rs::UTF_8 {
        encoding_rs::WINDOWS_1252
    } else {
        encoding
    };
    let out = work.join("utf8.csv");
    let mut src = BufReader::new(File::open(path).map_err(io)?);
    src.seek(SeekFrom::Start(skip)).map_err(io)?;
    let mut dst = BufWriter::new(File::create(&out).map_err(io)?);
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut inbuf = vec![0u8; 1 << 16];
    let mut outbuf = String::with_capacity(1 << 18);
    loop {
        let k = src.read(&mut inbuf).map_err(io)?;
        let last = k == 0;
        let mut input = &inbuf[..k];
        loop {
            outbuf.clear();
            let (result, read, _) = decoder.decode_to_string(input, &mut outbuf, last);
            dst.write_all(outbuf.as_bytes()).map_err(io)?;
            input = &input[read..];
            if result == encoding_rs::CoderResult::InputEmpty {
                break;
            }
        }
        if last {
            break;
        }
    }
    dst.flush().map_err(io)?;
    Ok((out, encoding.name()))
}

fn is_utf8(path: &Path) -> Result<bool, ReadError> {
    is_utf8_after(path, 0)
}

/// Whether the file from byte `skip` on is UTF-8 (read in pieces; a character split between
/// two pieces is carried over).
fn is_utf8_after(path: &Path, skip: u64) -> Result<bool, ReadError> {
    let io = |e: std::io::Error| ReadError::file(format!("Could not read the file: {e}"));
    let mut f = BufReader::new(File::open(path).map_err(io)?);
    f.seek(SeekFrom::Start(skip)).map_err(io)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut carry = 0usize;
    loop {
        let k = f.read(&mut buf[carry..]).map_err(io)?;
        let end = carry + k;
        if k == 0 {
            return Ok(carry == 0);
        }
        match std::str::from_utf8(&buf[..end]) {
            Ok(_) => carry = 0,
            Err(e) if e.error_len().is_none() => {
                // An incomplete character at the end: keep it for the next piece.
                let valid = e.valid_up_to();
                buf.copy_within(valid..end, 0);
                carry = end - valid;
            }
            Err(_) => return Ok(false),
        }
    }
}

/// The first sheet of a spreadsheet (xlsx, xlsb, xls, ods) as a CSV file: the columns from
/// the first to the last that hold a value, the rows that hold one. Xlsx and xlsb are read
/// cell by cell, twice (the columns, then the rows): their cells name their own positions, so a
/// file of two cells at `A1` and `XFD1048576` would otherwise be made into a table of 17
/// billion (calamine's `Range` holds every cell of the rectangle). More than [`MAX_COLUMNS`]
/// columns are refused. Xls and ods are read whole, bounded by their formats (65,536 × 256
/// cells for xls, calamine's 100 million for ods).
fn spreadsheet_to_csv(path: &Path, out: &Path) -> Result<(), ReadError> {
    use calamine::{open_workbook_auto, Reader};
    let mut book = open_workbook_auto(path).map_err(|e| unreadable(&e))?;
    let first = book
        .sheet_names()
        .first()
        .cloned()
        .ok_or_else(|| ReadError::file("The spreadsheet has no sheet"))?;
    let (mut min, mut max) = (u32::MAX, 0u32);
    each_cell(&mut book, &first, &mut |(_, col), text| {
        if !text.is_empty() {
            (min, max) = (min.min(col), max.max(col));
        }
        Ok(())
    })?;
    let width = if min > max {
        0
    } else {
        (max - min) as usize + 1
    };
    if width > MAX_COLUMNS {
        return Err(ReadError::file(format!(
            "The spreadsheet has more than {MAX_COLUMNS} columns"
        )));
    }
    let io =
        |e: std::io::Error| ReadError::file(format!("Could not write the converted file: {e}"));
    let mut w = csv::Writer::from_writer(BufWriter::new(File::create(out).map_err(io)?));
    let write_err =
        |e: csv::Error| ReadError::file(format!("Could not write the converted file: {e}"));
    let mut cells = vec![String::new(); width];
    let (mut row, mut filled) = (None, false);
    each_cell(&mut book, &first, &mut |(r, col), text| {
        if row.is_some_and(|cur| r < cur) {
            return Err(ReadError::file(
                "Could not read the spreadsheet: its cells are not in row order",
            ));
        }
        if row != Some(r) {
            if filled {
                w.write_record(&cells).map_err(write_err)?;
                cells.iter_mut().for_each(String::clear);
            }
            (row, filled) = (Some(r), false);
        }
        if !text.is_empty() {
            cells[(col - min) as usize] = text;
            filled = true;
        }
        Ok(())
    })?;
    if filled {
        w.write_record(&cells).map_err(write_err)?;
    }
    w.flush().map_err(io)?;
    Ok(())
}

fn unreadable(e: &dyn std::fmt::Display) -> ReadError {
    ReadError::file(format!("Could not read the spreadsheet: {e}"))
}

/// Calls `f` with each cell of the sheet `name` (its row and column, and its text), in the
/// order the sheet holds them.
fn each_cell<RS: Read + Seek>(
    book: &mut calamine::Sheets<RS>,
    name: &str,
    f: &mut dyn FnMut((u32, u32), String) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    use calamine::{Reader, Sheets};
    match book {
        Sheets::Xlsx(x) => {
            let mut reader = x.worksheet_cells_reader(name).map_err(|e| unreadable(&e))?;
            while let Some(cell) = reader.next_cell().map_err(|e| unreadable(&e))? {
                f(cell.get_position(), cell_text_ref(cell.get_value()))?;
            }
        }
        Sheets::Xlsb(x) => {
            let mut reader = x.worksheet_cells_reader(name).map_err(|e| unreadable(&e))?;
            while let Some(cell) = reader.next_cell().map_err(|e| unreadable(&e))? {
                f(cell.get_position(), cell_text_ref(cell.get_value()))?;
            }
        }
        other => {
            let range = other.worksheet_range(name).map_err(|e| unreadable(&e))?;
            let start = range.start().unwrap_or_default();
            for (r, row) in range.rows().enumerate() {
                for (c, v) in row.iter().enumerate() {
                    f((start.0 + r as u32, start.1 + c as u32), cell_text(v))?;
                }
            }
        }
    }
    Ok(())
}

/// A cell's text in the CSV file.
fn cell_text(c: &calamine::Data) -> String {
    use calamine::Data;
    match c {
        Data::Empty => String::new(),
        Data::String(s) => s.clone(),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        Data::Float(f) => f.to_string(),
        Data::Int(i) => i.to_string(),
        Data::Bool(b) => b.to_string(),
        Data::DateTime(d) => d
            .as_datetime()
            .map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string())
            .unwrap_or_else(|| d.as_f64().to_string()),
        Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::Error(e) => format!("#{e:?}"),
    }
}

/// [`cell_text`] of a streamed cell.
fn cell_text_ref(c: &calamine::DataRef<'_>) -> String {
    match c {
        calamine::DataRef::SharedString(s) => (*s).to_string(),
        other => cell_text(&calamine::Data::from(other.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn a_semicolon_file_in_windows_1252_is_read_and_typed() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "f.csv",
            b"name;\"size\";when;_id;name\nCaf\xe9;1.5;2024-01-02;a;x\nNa\xefve;2;2024-01-03 10:00;b;y\n",
        );
        let s = survey(&p, "csv", dir.path(), 1 << 20).unwrap();
        assert_eq!(s.delimiter, b';');
        assert_eq!(s.encoding, "windows-1252");
        assert_eq!(s.columns, ["name", "size", "when", "id", "name_2"]);
        assert_eq!(
            s.types,
            [
                Guess::Text,
                Guess::Numeric,
                Guess::Timestamp,
                Guess::Text,
                Guess::Text
            ]
        );
        assert_eq!(s.rows, 2);
        let text = std::fs::read_to_string(&s.path).unwrap();
        assert!(text.contains("Café") && text.contains("Naïve"), "{text}");
    }

    #[test]
    fn a_row_of_the_wrong_width_names_its_row_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "f.csv", b"a,b\n1,2\n\"multi\nline\",3\n4,5,6\n");
        let e = survey(&p, "csv", dir.path(), 1 << 20).unwrap_err();
        assert_eq!(e.row, Some(3));
        assert_eq!(e.line, Some(5));
        assert_eq!(
            e.to_string(),
            "Row 3 (line 5): has 3 fields, but the header has 2"
        );
    }

    #[test]
    fn utf16_and_bom_files_are_converted() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = vec![0xFF, 0xFE];
        for u in "a\tb\n1\tü\n".encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        let p = write(dir.path(), "f.tsv", &bytes);
        let s = survey(&p, "tsv", dir.path(), 1 << 20).unwrap();
        assert_eq!((s.encoding, s.delimiter), ("UTF-16LE", b'\t'));
        assert_eq!(s.columns, ["a", "b"]);
        let p = write(dir.path(), "g.csv", b"\xEF\xBB\xBFx,y\n1,2\n");
        let s = survey(&p, "csv", dir.path(), 1 << 20).unwrap();
        assert_eq!(s.columns, ["x", "y"]);
        assert_eq!(s.types, [Guess::Numeric, Guess::Numeric]);
    }

    #[test]
    fn empty_files_and_blank_headers() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "e.csv", b"\n\n");
        assert_eq!(
            survey(&p, "csv", dir.path(), 1 << 20).unwrap_err().message,
            "No entries found - nothing to load"
        );
        let p = write(dir.path(), "h.csv", b",b,\n1,2,3\n");
        let s = survey(&p, "csv", dir.path(), 1 << 20).unwrap();
        assert_eq!(s.columns, ["field_1", "b", "field_3"]);
    }

    /// An xlsx file of one sheet whose `<sheetData>` is `rows`, with `extra` before the root
    /// element of the sheet.
    fn xlsx(dir: &Path, name: &str, extra: &str, rows: &str) -> PathBuf {
        use std::io::Write as _;
        let p = dir.join(name);
        let mut z = zip::ZipWriter::new(File::create(&p).unwrap());
        let o = zip::write::SimpleFileOptions::default();
        let parts = [
            ("[Content_Types].xml", r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#.to_string()),
            ("_rels/.rels", r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string()),
            ("xl/workbook.xml", r#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#.to_string()),
            ("xl/_rels/workbook.xml.rels", r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.to_string()),
            ("xl/worksheets/sheet1.xml", format!(r#"<?xml version="1.0"?>{extra}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>"#)),
        ];
        for (path, text) in parts {
            z.start_file(path, o).unwrap();
            z.write_all(text.as_bytes()).unwrap();
        }
        z.finish().unwrap();
        p
    }

    fn cell(r: &str, text: &str) -> String {
        format!(r#"<c r="{r}" t="inlineStr"><is><t>{text}</t></is></c>"#)
    }

    #[test]
    fn spreadsheets_become_csv_from_their_first_to_their_last_column() {
        let dir = tempfile::tempdir().unwrap();
        let rows = format!(
            r#"<row r="2">{}{}</row><row r="3">{}<c r="D3"><v>42</v></c></row><row r="5">{}</row>"#,
            cell("B2", "name"),
            cell("D2", "n"),
            cell("B3", "a"),
            cell("C5", "b")
        );
        let p = xlsx(dir.path(), "a.xlsx", "", &rows);
        let out = dir.path().join("a.csv");
        spreadsheet_to_csv(&p, &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "name,,n\na,,42\n,b,\n"
        );
    }

    /// Two cells at A1 and XFD1048576 (calamine's whole-range reading would make 17 billion
    /// cells of them), and an entity bomb: refused or read as written, at once.
    #[test]
    fn hostile_spreadsheets_cost_little() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.csv");
        let far = format!(
            r#"<row r="1">{}</row><row r="1048576">{}</row>"#,
            cell("A1", "x"),
            cell("XFD1048576", "y")
        );
        let started = std::time::Instant::now();
        let e = spreadsheet_to_csv(&xlsx(dir.path(), "far.xlsx", "", &far), &out).unwrap_err();
        assert!(e.to_string().contains("more than 1000 columns"), "{e}");
        let tall = format!(
            r#"<row r="1">{}</row><row r="1048576">{}</row>"#,
            cell("A1", "x"),
            cell("A1048576", "y")
        );
        spreadsheet_to_csv(&xlsx(dir.path(), "tall.xlsx", "", &tall), &out).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "x\ny\n");
        let mut entities = String::from(r#"<!DOCTYPE w [<!ENTITY a "aaaaaaaaaa">"#);
        for level in 1..8 {
            let prev = if level == 1 {
                "a".to_string()
            } else {
                format!("e{}", level - 1)
            };
            entities.push_str(&format!(
                r#"<!ENTITY e{level} "{}">"#,
                format!("&{prev};").repeat(10)
            ));
        }
        entities.push_str("]>");
        let bomb = format!(r#"<row r="1">{}</row>"#, cell("A1", "&e7;"));
        let r = spreadsheet_to_csv(&xlsx(dir.path(), "bomb.xlsx", &entities, &bomb), &out);
        if r.is_ok() {
            assert!(
                std::fs::metadata(&out).unwrap().len() < 1024,
                "an entity was expanded"
            );
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}
