#!/usr/bin/env python3
"""Deterministic generator of a synthetic CKAN catalog, loaded through the Action API.

    bench/gen_catalog.py --url http://127.0.0.1:5078 --token "$TOKEN" --datasets 30000
    bench/gen_catalog.py --datasets 5 --dump -        # print the datasets as JSON lines, no server
    bench/gen_catalog.py --sqlite data/catalog.db --datasets 300000     # then: catalog search-index rebuild
    bench/gen_catalog.py --postgres postgres://postgres@127.0.0.1/catalog --datasets 300000    # idem

It creates ~50 organizations and ~20 groups (`organization_create`, `group_create`), then N
datasets with `package_create` from a pool of concurrent clients (one keep-alive HTTP connection
each), and prints the throughput in datasets/s. Everything is derived from --seed: dataset i is
built from its own random generator seeded with (seed, i), so the catalog is the same whatever
the concurrency or the order the requests finish in.

What a dataset looks like (roughly the mix of a national open-data portal):
  - a title and notes in English (55 %), French (15 %), German (15 %) or Spanish (15 %), with
    accents where the language has them;
  - 2–8 tags drawn Zipf-like (1/(rank+4)^1.1) from a vocabulary of ~300 tags in mixed case, so a few tags
    (e.g. "economy", "Transport", "statistics") are on a large share of datasets and most are rare;
  - 1–5 resources (mean ~3) with a name, a description, a URL and a format among CSV, JSON,
    XLSX, PDF, GeoJSON, XML, ZIP, SHP, KML, HTML, API, TXT, XLS, ODS, WMS (weighted);
  - an owner organization (Zipf-like: a few big publishers), 0–3 groups;
  - a license from CKAN's default list (cc-by, cc-by-sa, cc-zero, odc-odbl, other-open,
    notspecified …);
  - extras: theme (always), release_date (80 %), spatial (40 %, a GeoJSON bbox polygon),
    frequency (50 %);
  - ~5 % private; every dataset active.

Only the standard library is used (http.client, threading), so any python3 runs it.
"""

import argparse
import http.client
import json
import random
import sys
import threading
import time
import unicodedata
import urllib.parse

# --- vocabulary ------------------------------------------------------------------------------

# (English, French, German, Spanish) topic nouns used in titles and notes.
TOPICS = [
    ("transport", "transports", "Verkehr", "transporte"),
    ("population", "population", "Bevölkerung", "población"),
    ("economy", "économie", "Wirtschaft", "economía"),
    ("water quality", "qualité de l'eau", "Wasserqualität", "calidad del agua"),
    ("air quality", "qualité de l'air", "Luftqualität", "calidad del aire"),
    ("public spending", "dépenses publiques", "öffentliche Ausgaben", "gasto público"),
    ("education", "éducation", "Bildung", "educación"),
    ("health", "santé", "Gesundheit", "salud"),
    ("energy consumption", "consommation d'énergie", "Energieverbrauch", "consumo de energía"),
    ("housing", "logement", "Wohnungswesen", "vivienda"),
    ("employment", "emploi", "Beschäftigung", "empleo"),
    ("tourism", "tourisme", "Tourismus", "turismo"),
    ("agriculture", "agriculture", "Landwirtschaft", "agricultura"),
    ("crime", "criminalité", "Kriminalität", "delincuencia"),
    ("elections", "élections", "Wahlen", "elecciones"),
    ("public transport", "transports en commun", "öffentlicher Nahverkehr", "transporte público"),
    ("road traffic", "trafic routier", "Straßenverkehr", "tráfico rodado"),
    ("cycling", "vélo", "Radverkehr", "ciclismo"),
    ("waste", "déchets", "Abfall", "residuos"),
    ("land use", "occupation du sol", "Flächennutzung", "uso del suelo"),
    ("weather", "météo", "Wetter", "meteorología"),
    ("budget", "budget", "Haushalt", "presupuesto"),
    ("schools", "écoles", "Schulen", "escuelas"),
    ("hospitals", "hôpitaux", "Krankenhäuser", "hospitales"),
    ("parking", "stationnement", "Parken", "aparcamiento"),
    ("noise", "bruit", "Lärm", "ruido"),
    ("trees", "arbres", "Bäume", "árboles"),
    ("procurement", "marchés publics", "Vergabe", "contratación pública"),
    ("demographics", "démographie", "Demografie", "demografía"),
    ("broadband", "haut débit", "Breitband", "banda ancha"),
]

# (English, French, German, Spanish) kinds of dataset.
KINDS = [
    ("statistics", "statistiques", "Statistik", "estadísticas"),
    ("data", "données", "Daten", "datos"),
    ("register", "registre", "Register", "registro"),
    ("survey", "enquête", "Erhebung", "encuesta"),
    ("annual report", "rapport annuel", "Jahresbericht", "informe anual"),
    ("measurements", "mesures", "Messwerte", "mediciones"),
    ("map", "carte", "Karte", "mapa"),
    ("indicators", "indicateurs", "Indikatoren", "indicadores"),
    ("time series", "séries chronologiques", "Zeitreihen", "series temporales"),
    ("inventory", "inventaire", "Bestandsverzeichnis", "inventario"),
]

PLACES = [
    "Paris", "Lyon", "Marseille", "Besançon", "Nîmes", "Berlin", "München", "Köln", "Düsseldorf",
    "Göttingen", "Madrid", "Málaga", "Córdoba", "A Coruña", "Cádiz", "London", "Manchester",
    "Bristol", "Edinburgh", "Cardiff", "Zürich", "Genève", "Bruxelles", "Liège", "Wien",
    "Montréal", "Québec", "Toronto", "Bogotá", "Ciudad de México", "the county", "the region",
    "the metropolitan area", "the province", "the state",
]

# Sentence templates for notes, per language; {topic} {kind} {place} {year} {freq}.
NOTES = {
    "en": [
        "This dataset contains {kind} on {topic} in {place} for {year}.",
        "Figures are published {freq} by the statistics office and revised when new sources arrive.",
        "The data covers all districts of {place}; see the documentation for the methodology.",
        "Values before {year} were collected with a different method and are not directly comparable.",
        "Open data released under the licence below; please cite the publisher when you reuse it.",
        "Columns include the reporting period, the area code, the indicator and its unit.",
    ],
    "fr": [
        "Ce jeu de données présente les {kind} relatives à {topic} à {place} pour l'année {year}.",
        "Les chiffres sont publiés {freq} par le service statistique et révisés si nécessaire.",
        "Les données couvrent l'ensemble des arrondissements ; la méthodologie est décrite en annexe.",
        "Données ouvertes réutilisables, merci de citer le producteur lors de la réutilisation.",
        "Les colonnes donnent la période, le code géographique, l'indicateur et son unité.",
    ],
    "de": [
        "Dieser Datensatz enthält {kind} zum Thema {topic} in {place} für das Jahr {year}.",
        "Die Zahlen werden {freq} vom Statistischen Amt veröffentlicht und bei Bedarf korrigiert.",
        "Die Daten umfassen alle Stadtbezirke; die Methodik ist in der Dokumentation beschrieben.",
        "Offene Daten zur freien Weiterverwendung unter Nennung der veröffentlichenden Stelle.",
        "Spalten: Berichtszeitraum, Gebietsschlüssel, Merkmal und Maßeinheit.",
    ],
    "es": [
        "Este conjunto de datos contiene {kind} sobre {topic} en {place} para el año {year}.",
        "Las cifras se publican {freq} por la oficina de estadística y se revisan cuando es necesario.",
        "Los datos abarcan todos los distritos; la metodología se describe en la documentación.",
        "Datos abiertos reutilizables; por favor cite al organismo publicador al reutilizarlos.",
        "Las columnas indican el periodo, el código territorial, el indicador y su unidad.",
    ],
}
FREQ = {
    "en": ["monthly", "quarterly", "every year", "weekly", "daily"],
    "fr": ["chaque mois", "chaque trimestre", "chaque année", "chaque semaine", "quotidiennement"],
    "de": ["monatlich", "vierteljährlich", "jährlich", "wöchentlich", "täglich"],
    "es": ["mensualmente", "trimestralmente", "cada año", "semanalmente", "a diario"],
}
LANGS = [("en", 0.55), ("fr", 0.15), ("de", 0.15), ("es", 0.15)]
LANG_INDEX = {"en": 0, "fr": 1, "de": 2, "es": 3}


def build_tag_vocabulary():
    """~300 distinct tags in mixed case, ordered from most to least frequent.

    The head is the kind of tag every portal has ("economy", "Transport", "statistics"); the tail
    mixes topic words in four languages, place names and compound tags.
    """
    head = [
        "economy", "Transport", "statistics", "environment", "health", "Population", "education",
        "finance", "geospatial", "open-data", "Energy", "agriculture", "budget", "employment",
        "COVID-19", "climate", "water", "air quality", "mobility", "housing", "Tourism", "crime",
        "elections", "census", "GIS", "public-sector", "infrastructure", "Culture", "demography",
        "Biodiversity",
    ]
    tags = []
    seen = set()

    def add(t):
        t = t.strip()
        # CKAN's tag rule: alphanumerics, spaces, -, _ and . (Unicode letters allowed), 2–100.
        t = "".join(ch for ch in t if ch.isalnum() or ch in " -_.")
        if 2 <= len(t) <= 100 and t.lower() not in seen:
            seen.add(t.lower())
            tags.append(t)

    for t in head:
        add(t)
    for en, fr, de, es in TOPICS:
        add(en)
        add(fr.capitalize())
        add(de)
        add(es)
    for en, fr, de, es in KINDS:
        add(en.title())
        add(fr)
        add(de)
    for p in PLACES:
        if not p.startswith("the "):
            add(p)
    for year in range(2005, 2026):
        add(str(year))
    for en, _, _, _ in TOPICS:
        for suffix in ("open", "Register", "2024", "map"):
            add(f"{en}-{suffix}")
            if len(tags) >= 300:
                return tags
    return tags


TAGS = build_tag_vocabulary()

FORMATS = [
    ("CSV", 30), ("JSON", 12), ("XLSX", 12), ("PDF", 12), ("GeoJSON", 6), ("XML", 5), ("ZIP", 5),
    ("SHP", 3), ("KML", 2), ("HTML", 4), ("API", 3), ("TXT", 2), ("XLS", 2), ("ODS", 1), ("WMS", 1),
]
FORMAT_EXT = {"API": "json", "WMS": "xml", "GeoJSON": "geojson"}
RESOURCE_NAMES = {
    "CSV": ["Data (CSV)", "Full table", "Données CSV", "Tabelle (CSV)"],
    "JSON": ["Data (JSON)", "JSON export", "Datos JSON"],
    "XLSX": ["Spreadsheet", "Tableur Excel", "Excel-Tabelle", "Hoja de cálculo"],
    "PDF": ["Documentation", "Methodology", "Notice méthodologique", "Methodenbericht", "Informe"],
    "GeoJSON": ["Boundaries", "Geometries (GeoJSON)", "Limites administratives"],
}
RESOURCE_DESCRIPTIONS = [
    "All rows, one line per area and period.",
    "Extract for the latest period only.",
    "Description of the variables and of the collection method.",
    "Fichier complet, mis à jour à chaque publication.",
    "Vollständiger Auszug mit allen Merkmalen.",
    "Extracto completo con todas las variables.",
    "",
]

# CKAN's default license list (ckan/lib/licenses.py), weighted like a typical portal.
LICENSES = [
    ("cc-by", 30), ("cc-zero", 12), ("odc-odbl", 10), ("other-open", 8), ("notspecified", 8),
    ("cc-by-sa", 7), ("odc-by", 5), ("uk-ogl", 5), ("odc-pddl", 3), ("other-pd", 3),
    ("other-at", 3), ("cc-nc", 2), ("other-nc", 2), ("gfdl", 1), ("other-closed", 1),
]

THEMES = [
    "Economy and finance", "Environment", "Transport", "Health", "Education, culture and sport",
    "Government and public sector", "Population and society", "Regions and cities",
    "Agriculture, fisheries, forestry and food", "Energy", "Science and technology", "Justice",
    "International issues",
]

ORG_WORDS = [
    "Ministry of Transport", "National Statistics Office", "City of Paris", "Ville de Lyon",
    "Stadt Berlin", "Landeshauptstadt München", "Ayuntamiento de Madrid", "Junta de Andalucía",
    "Environment Agency", "Department of Health", "Office fédéral de la statistique",
    "Bundesamt für Kartographie", "Instituto Nacional de Estadística", "Region Île-de-France",
    "Greater Manchester Combined Authority", "Ministère de l'Éducation nationale",
    "Deutscher Wetterdienst", "Agencia Estatal de Meteorología", "Port Authority",
    "Public Procurement Office",
]
GROUP_TITLES = [
    "Economy", "Environment", "Transport", "Health", "Education", "Culture", "Energy",
    "Agriculture", "Justice", "Population", "Regions", "Science", "Government", "Housing",
    "Tourism", "Climate", "Mobility", "Finance", "Employment", "Geography",
]


def slugify(text, max_len=60):
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    out = []
    for ch in text.lower():
        out.append(ch if ch.isalnum() else "-")
    slug = "-".join(p for p in "".join(out).split("-") if p)
    return slug[:max_len].strip("-")


def cumulative(weighted):
    items = [w for _, w in weighted]
    return [x for x, _ in weighted], items


def zipf_cum_weights(n, s, q=0.0):
    """Cumulative Zipf–Mandelbrot weights 1/(k+q)^s for ranks k = 1..n."""
    out, acc = [], 0.0
    for k in range(1, n + 1):
        acc += 1.0 / ((k + q) ** s)
        out.append(acc)
    return out


# q=4 flattens the head: the top tag is on ~25 % of datasets, the 300th on ~0.1 %.
TAG_CUM_WEIGHTS = zipf_cum_weights(len(TAGS), 1.1, q=4.0)
ORG_CUM_WEIGHTS = {}
FORMAT_CHOICES, FORMAT_WEIGHTS = cumulative(FORMATS)
LICENSE_CHOICES, LICENSE_WEIGHTS = cumulative(LICENSES)


def organizations(n_orgs):
    out = []
    for k in range(n_orgs):
        base = ORG_WORDS[k % len(ORG_WORDS)]
        title = base if k < len(ORG_WORDS) else f"{base} — unit {k // len(ORG_WORDS) + 1}"
        out.append({
            "name": f"org-{k:02d}-{slugify(base, 40)}",
            "title": title,
            "description": f"Publisher {k}: {base}.",
        })
    return out


def groups(n_groups):
    out = []
    for k in range(n_groups):
        title = GROUP_TITLES[k % len(GROUP_TITLES)]
        if k >= len(GROUP_TITLES):
            title = f"{title} {k // len(GROUP_TITLES) + 1}"
        out.append({"name": f"group-{slugify(title)}", "title": title,
                    "description": f"Datasets about {title.lower()}."})
    return out


def dataset(seed, i, orgs, grps):
    """Dataset i of the catalog: a pure function of (seed, i)."""
    r = random.Random(f"{seed}:{i}")
    lang = r.choices([l for l, _ in LANGS], [w for _, w in LANGS])[0]
    li = LANG_INDEX[lang]
    topic = r.choice(TOPICS)
    kind = r.choice(KINDS)
    place = r.choice(PLACES)
    year = r.randint(2005, 2025)
    t, k = topic[li], kind[li]
    if lang == "en":
        title = f"{topic[0].capitalize()} {kind[0]} — {place} {year}"
    elif lang == "fr":
        title = f"{k.capitalize()} : {t} — {place} {year}"
    elif lang == "de":
        title = f"{t} – {k} {place} {year}"
    else:
        title = f"{k.capitalize()} de {t} en {place} ({year})"
    freq = r.choice(FREQ[lang])
    sentences = r.sample(NOTES[lang], r.randint(2, len(NOTES[lang])))
    notes = " ".join(s.format(topic=t, kind=k, place=place, year=year, freq=freq)
                     for s in sentences)

    n_tags = r.randint(2, 8)
    tags = []
    seen = set()
    while len(tags) < n_tags:
        tag = r.choices(TAGS, cum_weights=TAG_CUM_WEIGHTS)[0]
        if tag.lower() not in seen:
            seen.add(tag.lower())
            tags.append({"name": tag})

    n_res = r.choices([1, 2, 3, 4, 5], [10, 25, 35, 20, 10])[0]
    name = f"ds-{i:06d}-{slugify(title, 80)}"
    resources = []
    for j in range(n_res):
        fmt = r.choices(FORMAT_CHOICES, FORMAT_WEIGHTS)[0]
        ext = FORMAT_EXT.get(fmt, fmt.lower())
        rname = r.choice(RESOURCE_NAMES.get(fmt, [f"{fmt} file", f"Fichier {fmt}", f"{fmt}-Datei"]))
        resources.append({
            "name": rname,
            "description": r.choice(RESOURCE_DESCRIPTIONS),
            "url": f"https://data.example.org/{name}/resource-{j}.{ext}",
            "format": fmt,
        })

    # A few big publishers, a long tail (Zipf over the organization list).
    if len(orgs) not in ORG_CUM_WEIGHTS:
        ORG_CUM_WEIGHTS[len(orgs)] = zipf_cum_weights(len(orgs), 0.8)
    org = r.choices(orgs, cum_weights=ORG_CUM_WEIGHTS[len(orgs)])[0]
    n_groups = r.choices([0, 1, 2, 3], [30, 45, 18, 7])[0]
    dataset_groups = [{"name": g["name"]} for g in r.sample(grps, n_groups)]

    extras = [{"key": "theme", "value": r.choice(THEMES)}]
    if r.random() < 0.8:
        extras.append({"key": "release_date",
                       "value": f"{year}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"})
    if r.random() < 0.4:
        lon, lat = round(r.uniform(-10, 20), 3), round(r.uniform(36, 58), 3)
        extras.append({"key": "spatial", "value": json.dumps({
            "type": "Polygon",
            "coordinates": [[[lon, lat], [lon + 0.5, lat], [lon + 0.5, lat + 0.5],
                             [lon, lat + 0.5], [lon, lat]]]})})
    if r.random() < 0.5:
        extras.append({"key": "frequency", "value": r.choice(FREQ["en"])})

    return {
        "name": name,
        "title": title,
        "notes": notes,
        "owner_org": org["name"],
        "private": r.random() < 0.05,
        "license_id": r.choices(LICENSE_CHOICES, LICENSE_WEIGHTS)[0],
        "author": r.choice(["Statistics Office", "Open Data Team", "Service SIG",
                            "Referat Statistik", "Unidad de Datos"]),
        "maintainer_email": "opendata@example.org",
        "url": f"https://www.example.org/{name}",
        "version": f"{year}.{r.randint(1, 4)}",
        "tags": tags,
        "groups": dataset_groups,
        "resources": resources,
        "extras": extras,
    }


# --- HTTP ------------------------------------------------------------------------------------

class Client:
    """One keep-alive connection to the server (one per worker thread)."""

    def __init__(self, base_url, token, timeout=60):
        u = urllib.parse.urlsplit(base_url)
        self.host, self.port = u.hostname, u.port or 80
        self.prefix = u.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.conn = None

    def post(self, action, body):
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Authorization": self.token}
        for attempt in range(2):  # one reconnect if the kept-alive connection was closed
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
                self.conn.request("POST", f"{self.prefix}/api/3/action/{action}", payload, headers)
                resp = self.conn.getresponse()
                data = resp.read()
                return resp.status, data
            except (http.client.HTTPException, ConnectionError, OSError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")


def create_or_exists(client, action, body):
    status, data = client.post(action, body)
    if status == 200:
        return True
    text = data.decode(errors="replace")
    if status == 409 and "already" in text.lower():
        return False
    sys.exit(f"gen_catalog: {action} {body.get('name')} failed: {status} {text[:300]}")


def load(args):
    orgs, grps = organizations(args.organizations), groups(args.groups)
    client = Client(args.url, args.token)
    t0 = time.monotonic()
    for o in orgs:
        create_or_exists(client, "organization_create", o)
    for g in grps:
        create_or_exists(client, "group_create", g)
    print(f"gen_catalog: {len(orgs)} organizations, {len(grps)} groups "
          f"in {time.monotonic() - t0:.1f} s", flush=True)

    lock = threading.Lock()
    state = {"next": args.start, "created": 0, "failed": 0, "retried": 0, "private": 0,
             "errors": []}
    end = args.start + args.datasets

    def worker():
        c = Client(args.url, args.token)
        while True:
            with lock:
                i = state["next"]
                if i >= end:
                    return
                state["next"] = i + 1
            body = dataset(args.seed, i, orgs, grps)
            ok = False
            for attempt in range(args.retries + 1):
                try:
                    status, data = c.post("package_create", body)
                except OSError as e:
                    status, data = 0, str(e).encode()
                if status == 200:
                    ok = True
                    break
                with lock:
                    if len(state["errors"]) < 5:
                        state["errors"].append(f"{body['name']}: {status} "
                                               f"{data.decode(errors='replace')[:300]}")
                    if attempt < args.retries:
                        state["retried"] += 1
                if status in (400, 403, 409):  # validation or auth: retrying will not help
                    break
                time.sleep(0.05 * (attempt + 1))
            with lock:
                if ok:
                    state["created"] += 1
                    state["private"] += body["private"]
                else:
                    state["failed"] += 1
                done = state["created"] + state["failed"]
            if args.progress and done % args.progress == 0:
                el = time.monotonic() - t1
                print(f"gen_catalog: {done}/{args.datasets} in {el:.0f} s "
                      f"({done / el:.0f} datasets/s)", flush=True)

    t1 = time.monotonic()
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    el = time.monotonic() - t1
    for e in state["errors"]:
        print(f"gen_catalog: error: {e}", file=sys.stderr)
    print(f"gen_catalog: created={state['created']} failed={state['failed']} "
          f"retried={state['retried']} private={state['private']} "
          f"public={state['created'] - state['private']} seconds={el:.1f} "
          f"datasets_per_s={state['created'] / el:.1f} concurrency={args.concurrency}",
          flush=True)
    return 0 if state["failed"] == 0 else 1


# --- direct writers (to reach 300k datasets in reasonable time) ---------------------------------

def direct_rows(seed, i, d, now, group_ids, tag_ids, creator, new_tags):
    """The rows package_create writes for dataset i (`d` = dataset(seed, i, …)), stamped `now`.

    Returns (package, resources, package_tags, members): the package row as
    (id, name, type, state, private, owner_org, creator_user_id, metadata_created,
    metadata_modified, data) with the JSON document in `data`, then (id, package_id, name, state),
    (package_id, tag_id, state) and (id, group_id, table_name, table_id, capacity, state) rows.
    Free tags absent from `tag_ids` get an id, are added to it and appended to `new_tags` as
    (id, name): the caller inserts them. Ids are derived from (seed, i), so a rerun writes the same.
    """
    import uuid

    r = random.Random(f"{seed}:{i}:ids")
    pid = str(uuid.UUID(int=r.getrandbits(128), version=4))
    tags = []
    for t in d["tags"]:
        tid = tag_ids.get(t["name"])
        if tid is None:
            tid = str(uuid.UUID(int=r.getrandbits(128), version=4))
            tag_ids[t["name"]] = tid
            new_tags.append((tid, t["name"]))
        tags.append({"display_name": t["name"], "id": tid, "name": t["name"], "state": "active",
                     "vocabulary_id": None})
    tags.sort(key=lambda t: t["name"].encode())
    resources = []
    for pos, res in enumerate(d["resources"]):
        resources.append({
            "cache_last_updated": None, "cache_url": None, "created": now,
            "description": res["description"], "format": res["format"], "hash": "",
            "id": str(uuid.UUID(int=r.getrandbits(128), version=4)), "last_modified": None,
            "metadata_modified": now, "mimetype": None, "mimetype_inner": None,
            "name": res["name"], "package_id": pid, "position": pos, "resource_type": None,
            "size": None, "state": "active", "url": res["url"], "url_type": None,
        })
    org_id = group_ids[d["owner_org"]]
    doc = {
        "title": d["title"], "author": d["author"], "author_email": None, "maintainer": None,
        "maintainer_email": d["maintainer_email"], "license_id": d["license_id"],
        "notes": d["notes"], "url": d["url"], "version": d["version"], "type": "dataset",
        "id": pid, "name": d["name"], "state": "active", "private": d["private"],
        "owner_org": org_id, "creator_user_id": creator, "metadata_created": now,
        "metadata_modified": now, "extras": d["extras"], "tags": tags, "resources": resources,
    }
    package = (pid, d["name"], "dataset", "active", d["private"], org_id, creator, now, now,
               json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
    members = [(org_id, "organization")] + [(group_ids[g["name"]], "public") for g in d["groups"]]
    return (
        package,
        [(x["id"], pid, x["name"], "active") for x in resources],
        [(pid, t["id"], "active") for t in tags],
        [(str(uuid.UUID(int=r.getrandbits(128), version=4)), gid, "package", pid, cap, "active")
         for gid, cap in members],
    )


def utc_now():
    import datetime
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def stamp(base, written):
    """The metadata_created of the `written`-th dataset: one microsecond apart, as the server's."""
    import datetime
    return (base + datetime.timedelta(microseconds=written)).strftime("%Y-%m-%dT%H:%M:%S.%f")


def sqlite_fill(args):
    """Writes datasets straight into a stopped embedded catalog's SQLite database.

    Same datasets as the API load (dataset(seed, i)); the rows are what package_create writes
    (package row with the JSON document, resource, package_tag, member rows), with
    organizations, groups, tags and the creator taken from rows the API load already made.
    Datasets whose name is already present are skipped, so this completes a partial API load.
    The index is not touched: run `catalog search-index rebuild` afterwards. The search outbox
    rows the triggers queue are removed (the rebuild indexes everything).
    """
    import sqlite3

    db = sqlite3.connect(args.sqlite)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    orgs, grps = organizations(args.organizations), groups(args.groups)
    group_ids = dict(db.execute("SELECT name, id FROM catalog_group"))
    missing = [g["name"] for g in orgs + grps if g["name"] not in group_ids]
    if missing:
        sys.exit(f"gen_catalog: organizations/groups missing from the database (load some datasets "
                 f"through the API first): {missing[:5]}")
    tag_ids = dict(db.execute("SELECT name, id FROM tag WHERE vocabulary_id = ''"))
    creator = db.execute("SELECT creator_user_id FROM package WHERE creator_user_id IS NOT NULL "
                         "LIMIT 1").fetchone()
    if creator is None:
        sys.exit("gen_catalog: no dataset in the database to take the creator from")
    creator = creator[0]
    existing = {r[0] for r in db.execute("SELECT name FROM package")}
    max_seq = db.execute("SELECT COALESCE(MAX(seq), 0) FROM search_outbox").fetchone()[0]
    end = args.start + args.datasets
    t0 = time.monotonic()
    base = utc_now()
    written = private = 0
    for i in range(args.start, end):
        d = dataset(args.seed, i, orgs, grps)
        if d["name"] in existing:
            continue
        new_tags = []
        package, resources, package_tags, members = direct_rows(
            args.seed, i, d, stamp(base, written), group_ids, tag_ids, creator, new_tags)
        db.executemany("INSERT INTO tag (id, name, vocabulary_id) VALUES (?, ?, '')", new_tags)
        db.execute(
            "INSERT INTO package (id, name, type, state, private, owner_org, creator_user_id, "
            "metadata_created, metadata_modified, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            package[:4] + (int(package[4]),) + package[5:])
        db.executemany("INSERT INTO resource (id, package_id, name, state) VALUES (?, ?, ?, ?)",
                       resources)
        db.executemany("INSERT INTO package_tag (package_id, tag_id, state) VALUES (?, ?, ?)",
                       package_tags)
        db.executemany(
            "INSERT INTO member (id, group_id, table_name, table_id, capacity, state) "
            "VALUES (?, ?, ?, ?, ?, ?)", members)
        written += 1
        private += d["private"]
        if written % 10000 == 0:
            db.commit()
            if args.progress:
                print(f"gen_catalog: sqlite: {written} written in {time.monotonic() - t0:.0f} s", flush=True)
    db.execute("DELETE FROM search_outbox WHERE seq > ?", (max_seq,))
    # The sequence goes back too: numbers taken and never seen would look like transactions
    # still running to a node that follows the feed (gaps it waits two minutes for).
    db.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'search_outbox'", (max_seq,))
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    el = time.monotonic() - t0
    print(f"gen_catalog: sqlite: written={written} skipped={args.datasets - written} private={private} "
          f"seconds={el:.1f} (run `catalog search-index rebuild` next)", flush=True)
    return 0


# PostgreSQL through the `psql` client (no driver in the standard library): COPY text format.

def copy_field(value):
    """A value in COPY's text format: \\N for NULL, t/f for booleans, and backslash, newline,
    carriage return and tab escaped (the delimiter is tab, so nothing else is special)."""
    if value is None:
        return "\\N"
    if value is True:
        return "t"
    if value is False:
        return "f"
    s = str(value)
    if "\\" in s or "\n" in s or "\r" in s or "\t" in s:
        s = s.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return s


def copy_rows(rows):
    return "".join("\t".join(map(copy_field, row)) + "\n" for row in rows)


COPY_UNESCAPE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def copy_unfield(field):
    """The inverse of copy_field for what `COPY … TO STDOUT` writes (text format)."""
    if field == "\\N":
        return None
    if "\\" not in field:
        return field
    import re
    return re.sub(r"\\(.)", lambda m: COPY_UNESCAPE.get(m.group(1), m.group(1)), field)


def psql_command(dsn):
    import shutil
    psql = shutil.which("psql")
    if psql is None:
        sys.exit("gen_catalog: --postgres needs the psql client on PATH")
    return [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn]


def pg_query(dsn, sql):
    """The rows of a query, as tuples of strings (None for NULL)."""
    import os
    import subprocess

    out = subprocess.run(psql_command(dsn) + ["-c", f"COPY ({sql}) TO STDOUT"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, PGCLIENTENCODING="UTF8"))
    if out.returncode != 0:
        sys.exit(f"gen_catalog: psql: {sql}: {out.stderr.decode(errors='replace').strip()}")
    # Not splitlines(): that also splits on U+2028, \x1c … which COPY leaves unescaped.
    lines = out.stdout.decode("utf-8").split("\n")
    return [tuple(copy_unfield(f) for f in line.split("\t")) for line in lines if line]


def pg_fill(args):
    """Writes datasets straight into a stopped catalog's PostgreSQL database (`--postgres DSN`).

    The PostgreSQL twin of sqlite_fill: the same datasets and the same rows (package row with
    the JSON document, resource, package_tag, member rows, new free tags), streamed through one
    `psql` process with COPY, one transaction per --pg-chunk datasets (a rerun skips what a
    failed run committed). Search outbox triggers are switched off for the session
    (session_replication_role = replica) when the user is a superuser; otherwise they fire and
    the outbox rows they queued are removed afterwards and its sequence set back, so that a
    node following the feed sees no gap. Run `catalog --database-url DSN search-index rebuild`
    afterwards.
    """
    import os
    import queue
    import subprocess

    dsn = args.postgres
    orgs, grps = organizations(args.organizations), groups(args.groups)
    group_ids = dict(pg_query(dsn, "SELECT name, id FROM catalog_group"))
    missing = [g["name"] for g in orgs + grps if g["name"] not in group_ids]
    if missing:
        sys.exit(f"gen_catalog: organizations/groups missing from the database (load some datasets "
                 f"through the API first): {missing[:5]}")
    tag_ids = dict(pg_query(dsn, "SELECT name, id FROM tag WHERE vocabulary_id = ''"))
    creator = pg_query(dsn, "SELECT creator_user_id FROM package WHERE creator_user_id IS NOT NULL "
                            "LIMIT 1")
    if not creator:
        sys.exit("gen_catalog: no dataset in the database to take the creator from")
    creator = creator[0][0]
    existing = {r[0] for r in pg_query(dsn, "SELECT name FROM package")}
    max_seq = int(pg_query(dsn, "SELECT COALESCE(MAX(seq), 0) FROM search_outbox")[0][0])
    superuser = pg_query(dsn, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0][0] == "t"

    proc = subprocess.Popen(psql_command(dsn), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env=dict(os.environ, PGCLIENTENCODING="UTF8"))
    # A writer thread feeds psql while the main thread builds the next chunk.
    chunks = queue.Queue(maxsize=2)
    broken = []

    def writer():
        while True:
            data = chunks.get()
            if data is None:
                break
            if broken:
                continue
            try:
                proc.stdin.write(data)
                proc.stdin.flush()
            except (BrokenPipeError, OSError) as e:
                broken.append(e)
        try:
            proc.stdin.close()
        except OSError:
            pass

    wt = threading.Thread(target=writer, daemon=True)
    wt.start()
    session = "SET client_encoding = 'UTF8';\nSET synchronous_commit = off;\n"
    if superuser:
        session += "SET session_replication_role = replica;\n"
    chunks.put(session.encode())

    def copy(table, columns, rows):
        if not rows:
            return ""
        return f"COPY {table} ({columns}) FROM STDIN;\n{copy_rows(rows)}\\.\n"

    end = args.start + args.datasets
    t0 = time.monotonic()
    base = utc_now()
    written = private = 0
    new_tags, packages, resources, package_tags, members = [], [], [], [], []

    def flush():
        chunks.put(("BEGIN;\n"
                    + copy("tag", "id, name, vocabulary_id", [(t, n, "") for t, n in new_tags])
                    + copy("package", "id, name, type, state, private, owner_org, creator_user_id, "
                           "metadata_created, metadata_modified, data", packages)
                    + copy("resource", "id, package_id, name, state", resources)
                    + copy("package_tag", "package_id, tag_id, state", package_tags)
                    + copy("member", "id, group_id, table_name, table_id, capacity, state", members)
                    + "COMMIT;\n").encode("utf-8"))
        for rows in (new_tags, packages, resources, package_tags, members):
            rows.clear()

    for i in range(args.start, end):
        if broken:
            break
        d = dataset(args.seed, i, orgs, grps)
        if d["name"] in existing:
            continue
        p, res, pt, mem = direct_rows(args.seed, i, d, stamp(base, written), group_ids, tag_ids,
                                      creator, new_tags)
        packages.append(p)
        resources.extend(res)
        package_tags.extend(pt)
        members.extend(mem)
        written += 1
        private += d["private"]
        if written % args.pg_chunk == 0:
            flush()
            if args.progress:
                print(f"gen_catalog: postgres: {written} sent in {time.monotonic() - t0:.0f} s",
                      flush=True)
    if packages:
        flush()
    # What the triggers queued (none when they were off) goes, and the sequence goes back to
    # where it was: a node following the feed would otherwise wait for the skipped numbers.
    chunks.put((
        "BEGIN;\n"
        f"DELETE FROM search_outbox WHERE seq > {max_seq};\n"
        + ("" if superuser else
           f"SELECT setval(pg_get_serial_sequence('search_outbox', 'seq'), {max(max_seq, 1)}, "
           f"{'true' if max_seq > 0 else 'false'});\n")
        + "COMMIT;\n"
        # Fresh statistics for the planner (skipped, silently, unless the user owns the tables).
        "SET client_min_messages = error;\n"
        "ANALYZE package, resource, package_tag, member, tag;\n").encode())
    chunks.put(None)
    wt.join()
    rc = proc.wait()
    el = time.monotonic() - t0
    if rc != 0 or broken:
        print(f"gen_catalog: postgres: psql failed (exit status {rc}); the chunks committed before "
              f"the error stay, a rerun skips them", file=sys.stderr, flush=True)
        return 1
    print(f"gen_catalog: postgres: written={written} skipped={args.datasets - written} "
          f"private={private} triggers={'off' if superuser else 'on, outbox rows removed'} "
          f"seconds={el:.1f} (run `catalog --database-url DSN search-index rebuild` next)", flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:5000", help="base URL of catalog serve")
    ap.add_argument("--token", default="", help="API token of a sysadmin")
    ap.add_argument("--datasets", type=int, default=30000, help="number of datasets (N)")
    ap.add_argument("--start", type=int, default=0, help="index of the first dataset (to extend a catalog)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--organizations", type=int, default=50)
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--concurrency", type=int, default=16, help="concurrent clients")
    ap.add_argument("--retries", type=int, default=2, help="retries of a package_create answered 5xx")
    ap.add_argument("--progress", type=int, default=10000, help="print progress every N datasets (0: never)")
    ap.add_argument("--dump", metavar="FILE", help="write the datasets as JSON lines ('-': stdout) instead of loading")
    ap.add_argument("--sqlite", metavar="DB", help="write the datasets not yet present straight into this "
                    "catalog.db (embedded backend, server stopped) instead of through the API")
    ap.add_argument("--postgres", metavar="DSN", help="write the datasets not yet present straight into "
                    "this catalog's PostgreSQL database (postgres://…, server stopped) with psql and COPY "
                    "instead of through the API")
    ap.add_argument("--pg-chunk", type=int, default=10000, help="datasets per transaction with --postgres")
    args = ap.parse_args()

    if args.dump:
        orgs, grps = organizations(args.organizations), groups(args.groups)
        out = sys.stdout if args.dump == "-" else open(args.dump, "w", encoding="utf-8")
        for i in range(args.start, args.start + args.datasets):
            out.write(json.dumps(dataset(args.seed, i, orgs, grps), ensure_ascii=False) + "\n")
        if out is not sys.stdout:
            out.close()
        return 0
    if args.sqlite:
        return sqlite_fill(args)
    if args.postgres:
        return pg_fill(args)
    if not args.token:
        ap.error("--token is required to load (or use --dump)")
    return load(args)


if __name__ == "__main__":
    sys.exit(main())
