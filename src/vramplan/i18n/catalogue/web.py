"""Messages of the web page, the JSON API and `vramplan serve`, in French and English.

The seed calculator is a French page; its sections (Données, Résultats, Détails, FAQ, Mentions
légales) keep their French titles, and the English version says the same things.
"""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- page head and navigation -------------------------------------------------------------
    "web.title": {
        FR: "Calculateur de VRAM pour l'entraînement de LLM",
        EN: "VRAM calculator for LLM training",
    },
    "web.description": {
        FR: "Combien de mémoire GPU (VRAM) faut-il pour entraîner un LLM ? Paramètres, mémoire "
        "par paramètre et activations : le total, son détail et le verdict pour vos GPU.",
        EN: "How much GPU memory (VRAM) does it take to train an LLM? Parameters, memory per "
        "parameter and activations: the total, its breakdown and the verdict for your GPUs.",
    },
    "web.intro": {
        FR: "Entraîner un modèle de langage demande bien plus de mémoire GPU que le faire "
        "tourner : "
        "en plus des poids, il faut garder leurs gradients, une copie maîtresse en haute "
        "précision, "
        "les états de l'optimiseur et les activations du passage avant. Indiquez la taille du "
        "modèle "
        "et la mémoire par paramètre : le calculateur donne la VRAM nécessaire, son détail, et "
        "dit si "
        "elle tient sur une carte grand public de 24 Go, sur un accélérateur de 80 Go ou sur "
        "d'autres GPU.",
        EN: "Training a language model takes far more GPU memory than running it: besides the "
        "weights, you keep their gradients, a high-precision master copy, the optimizer states and "
        "the activations of the forward pass. Enter the model size and the memory per parameter: "
        "the calculator gives the VRAM you need, its breakdown, and tells you whether it fits on a "
        "24 GB consumer card, on an 80 GB accelerator or on other GPUs.",
    },
    "web.lang_switch": {FR: "Language: English", EN: "Langue : français"},
    "web.lang_switch_label": {FR: "Read this page in English", EN: "Lire cette page en français"},
    "web.skip": {FR: "Aller aux résultats", EN: "Skip to the results"},
    "web.api_link": {FR: "API JSON", EN: "JSON API"},
    "web.footer": {
        FR: "vramplan {version} — logiciel libre ; aucune requête externe, aucun cookie, "
        "aucune mesure d'audience.",
        EN: "vramplan {version} — free software; no external requests, no cookies, no analytics.",
    },
    # --- Données (inputs) ---------------------------------------------------------------------
    "web.inputs": {FR: "Données", EN: "Inputs"},
    "web.group_model": {FR: "Modèle", EN: "Model"},
    "web.model": {FR: "Modèle pré-défini", EN: "Preset model"},
    "web.model_unit": {FR: "facultatif", EN: "optional"},
    "web.model_hint": {
        FR: "Cherchez parmi {count} modèles (nom ou dépôt Hugging Face) : son nombre exact de "
        "paramètres remplit « Paramètres ». Videz ce champ pour saisir un nombre.",
        EN: "Search {count} models (name or Hugging Face repo): its exact parameter count fills "
        "\"Parameters\". Clear this field to type a number.",
    },
    "web.model_line": {
        FR: "Modèle : {name} ({repo}), {count} paramètres exactement.",
        EN: "Model: {name} ({repo}), exactly {count} parameters.",
    },
    "web.config_title": {
        FR: "Ou votre config.json (Hugging Face)", EN: "Or your config.json (Hugging Face)"
    },
    "web.config_label": {FR: "Contenu de config.json", EN: "Contents of config.json"},
    "web.config_file": {FR: "Fichier config.json", EN: "config.json file"},
    "web.config_hint": {
        FR: "Collez le fichier (ou choisissez-le) : le serveur compte ses paramètres exactement et "
        "remplit « Paramètres ». Rien n'est conservé.",
        EN: "Paste the file (or pick it): the server counts its parameters exactly and fills "
        "\"Parameters\". Nothing is stored.",
    },
    "web.config_submit": {FR: "Compter les paramètres", EN: "Count the parameters"},
    "web.config_too_large": {
        FR: "config.json : le texte dépasse {limit} ; collez seulement le fichier config.json",
        EN: "config.json: the text is larger than {limit}; paste only the config.json file",
    },
    "web.params": {FR: "Paramètres", EN: "Parameters"},
    "web.params_unit": {FR: "milliards", EN: "billion"},
    "web.params_hint": {
        FR: "Nombre de paramètres N, en milliards (7 ou 7,5).",
        EN: "Parameter count N, in billions (7 or 7.5).",
    },
    "web.bytes_per_param": {FR: "Mémoire par paramètre", EN: "Memory per parameter"},
    "web.preset.adam-mixed": {
        FR: "Adam en précision mixte (16 octets/param)",
        EN: "Adam in mixed precision (16 bytes/param)",
    },
    "web.preset.adam-8bit": {
        FR: "Adam 8 bits (≈ 12 octets/param)", EN: "8-bit Adam (≈ 12 bytes/param)"
    },
    "web.preset.sgd-momentum": {
        FR: "SGD avec moment (≈ 8 octets/param)", EN: "SGD with momentum (≈ 8 bytes/param)"
    },
    "web.preset.custom": {FR: "Valeur personnalisée", EN: "Custom value"},
    "web.custom_bytes": {
        FR: "Mémoire par paramètre personnalisée", EN: "Custom memory per parameter"
    },
    "web.custom_bytes_unit": {FR: "octets/param", EN: "bytes/param"},
    "web.custom_bytes_hint": {
        FR: "Utilisée avec « Valeur personnalisée » (par exemple 10).",
        EN: "Used with \"Custom value\" (e.g. 10).",
    },
    "web.group_activations": {FR: "Activations", EN: "Activations"},
    "web.activations": {FR: "Mémoire d'activations", EN: "Activation memory"},
    "web.activations_unit": {FR: "Go", EN: "GB"},
    "web.activations_hint": {
        FR: "Mémoire d'activations A, en Go (10⁹ octets), mesurée ou estimée à part.",
        EN: "Activation memory A, in GB (10⁹ bytes), measured or estimated separately.",
    },
    "web.submit": {FR: "Calculer", EN: "Calculate"},
    # --- Résultats ----------------------------------------------------------------------------
    "web.results": {FR: "Résultats", EN: "Results"},
    "web.empty": {
        FR: "Saisissez une valeur pour afficher les résultats.",
        EN: "Enter a value to see the results.",
    },
    "web.fix_inputs": {
        FR: "Corrigez la valeur signalée dans les données pour afficher les résultats.",
        EN: "Correct the value flagged in the inputs to see the results.",
    },
    "web.model_states": {FR: "États du modèle", EN: "Model states"},
    "web.activations_result": {FR: "Activations", EN: "Activations"},
    "web.total": {FR: "VRAM totale", EN: "Total VRAM"},
    "web.in_gib": {FR: "soit {value}", EN: "that is {value}"},
    "web.breakdown": {FR: "Détail par paramètre", EN: "Breakdown per parameter"},
    "web.col_part": {FR: "Partie", EN: "Part"},
    "web.col_per_param": {FR: "Par paramètre", EN: "Per parameter"},
    "web.col_memory": {FR: "Mémoire", EN: "Memory"},
    "web.custom_breakdown": {
        FR: "Valeur personnalisée : {bytes} par paramètre, sans détail.",
        EN: "Custom value: {bytes} per parameter, with no breakdown.",
    },
    "web.chart_title": {FR: "Répartition de la VRAM", EN: "VRAM breakdown"},
    "web.chart_label": {
        FR: "Barre empilée : {parts} ; total {total}, comparé à {lines}.",
        EN: "Stacked bar: {parts}; total {total}, compared with {lines}.",
    },
    "web.chart_line": {FR: "carte de {capacity}", EN: "{capacity} card"},
    "chart.weights": {FR: "poids", EN: "weights"},
    "chart.gradients": {FR: "gradients", EN: "gradients"},
    "chart.master_weights": {FR: "copie maîtresse", EN: "master copy"},
    "chart.optimizer_states": {FR: "états de l'optimiseur", EN: "optimizer states"},
    "chart.planning_margin": {FR: "marge du chiffre rond", EN: "round-figure margin"},
    "chart.activations": {FR: "activations", EN: "activations"},
    "chart.model_states": {FR: "états du modèle", EN: "model states"},
    "web.verdict": {FR: "Verdict", EN: "Verdict"},
    "web.verdict_consumer": {
        FR: "Carte grand public de 24 Go ({gpu})", EN: "24 GB consumer card ({gpu})"
    },
    "web.verdict_datacenter": {
        FR: "Accélérateur de 80 Go ({gpu})", EN: "80 GB accelerator ({gpu})"
    },
    "web.fits": {
        FR: "Tient : il reste {headroom} sur {capacity}.",
        EN: "Fits: {headroom} left out of {capacity}.",
    },
    "web.does_not_fit": {
        FR: "Ne tient pas : il manque {missing} ; au moins {count} cartes*.",
        EN: "Does not fit: {missing} short; at least {count} cards*.",
    },
    "web.catalogue": {
        FR: "Tout le catalogue ({count} GPU)", EN: "The whole catalogue ({count} GPUs)"
    },
    "web.capacity_note": {
        FR: "Une carte vendue « 80 GB » contient 80 Gio (80 × 2³⁰ octets) : les capacités sont "
        "comparées en octets.",
        EN: "A card sold as \"80 GB\" holds 80 GiB (80 × 2³⁰ bytes): capacities are compared in "
        "bytes.",
    },
    # --- Détails ------------------------------------------------------------------------------
    "web.details": {FR: "Détails", EN: "Details"},
    "web.details_states_title": {
        FR: "Les états du modèle dominent", EN: "Model states dominate"
    },
    "web.details_states": {
        FR: "Pour un entraînement complet, la mémoire est d'abord celle des états du modèle : "
        "chaque paramètre garde son poids, son gradient et les états de l'optimiseur. Avec N "
        "milliards de paramètres et B octets par paramètre, les états du modèle occupent :",
        EN: "In full training, memory is first that of the model states: every parameter keeps "
        "its weight, its gradient and the optimizer states. With N billion parameters and B bytes "
        "per parameter, the model states take:",
    },
    "web.details_states_unit": {
        FR: "N milliards de paramètres × B octets = N·B × 10⁹ octets, soit N·B Go.",
        EN: "N billion parameters × B bytes = N·B × 10⁹ bytes, that is N·B GB.",
    },
    "web.details_16_title": {FR: "Les 16 octets d'Adam", EN: "Adam's 16 bytes"},
    "web.details_16": {
        FR: "En précision mixte, Adam garde pour chaque paramètre : 2 octets de poids fp16/bf16, "
        "2 octets de gradient, 4 octets de copie maîtresse fp32, puis 4 + 4 octets pour les deux "
        "moments d'Adam (ZeRO, Rajbhandari et al. 2020, section 3.1) :",
        EN: "In mixed precision, Adam keeps for every parameter: 2 bytes of fp16/bf16 weight, 2 "
        "bytes of gradient, 4 bytes of fp32 master copy, then 4 + 4 bytes for Adam's two moments "
        "(ZeRO, Rajbhandari et al. 2020, section 3.1):",
    },
    "web.details_cheaper_title": {FR: "Des optimiseurs plus sobres", EN: "Cheaper optimizers"},
    "web.details_cheaper": {
        FR: "Adam 8 bits stocke ses deux moments sur un octet chacun (Dettmers et al. 2022) : "
        "2 + 2 + 4 + 1 + 1 = 10 octets réels, que la planification arrondit à ≈ 12. SGD avec "
        "moment "
        "ne garde qu'un tampon de moment : ≈ 8 octets par paramètre avec des poids et gradients "
        "16 bits et un moment fp32.",
        EN: "8-bit Adam stores its two moments in one byte each (Dettmers et al. 2022): "
        "2 + 2 + 4 + 1 + 1 = 10 real bytes, which planning rounds to ≈ 12. SGD with momentum keeps "
        "a single momentum buffer: ≈ 8 bytes per parameter with 16-bit weights and gradients and "
        "an fp32 momentum.",
    },
    "web.details_activations_title": {
        FR: "Les activations, saisies à part", EN: "Activations, entered separately"
    },
    "web.details_activations": {
        FR: "Les activations dépendent de la taille de lot, de la longueur de séquence et de "
        "l'architecture, pas seulement du nombre de paramètres : elles sont donc saisies à part, "
        "en Go, et ajoutées aux états du modèle :",
        EN: "Activations depend on the batch size, the sequence length and the architecture, not "
        "only on the parameter count: they are entered separately, in GB, and added to the model "
        "states:",
    },
    "web.details_measure": {
        FR: "Pour les connaître, mesurez une étape d'entraînement (par exemple avec "
        "torch.cuda.max_memory_allocated() en PyTorch) ; pour les réduire, utilisez le "
        "recalcul des activations (activation checkpointing), qui ne garde que quelques tenseurs "
        "et recalcule les autres pendant la rétropropagation.",
        EN: "To know them, measure one training step (for instance with "
        "torch.cuda.max_memory_allocated() in PyTorch); to cut them, use activation "
        "checkpointing, which keeps only a few tensors and recomputes the others during the "
        "backward pass.",
    },
    "web.details_example_title": {FR: "Exemple", EN: "Worked example"},
    "web.details_example": {
        FR: "Un modèle de {params} milliards de paramètres entraîné avec Adam en précision mixte :",
        EN: "A {params}-billion-parameter model trained with Adam in mixed precision:",
    },
    "web.details_example_total": {
        FR: "Avec {activations} d'activations :",
        EN: "With {activations} of activations:",
    },
    "web.details_example_verdict": {
        FR: "C'est plus que la mémoire d'un seul accélérateur de 80 Go ({gpu}, {capacity}).",
        EN: "That is more than the memory of a single 80 GB accelerator ({gpu}, {capacity}).",
    },
    "web.details_example_verdict_fits": {
        FR: "Cela tient sur un seul accélérateur de 80 Go ({gpu}, {capacity}).",
        EN: "That fits on a single 80 GB accelerator ({gpu}, {capacity}).",
    },
    "web.details_lora_title": {FR: "Pourquoi LoRA change tout", EN: "Why LoRA changes the picture"},
    "web.details_lora": {
        FR: "Avec LoRA, les poids du modèle sont gelés : ils gardent leur mémoire "
        "({frozen_formula} "
        "en 16 bits), mais n'ont ni gradient ni état d'optimiseur. Ceux-ci ne concernent que les "
        "petites matrices ajoutées, bien moins de 1 % des paramètres : même à 16 octets chacun, "
        "1 % de {params} milliards ne fait que {adapters}. L'entraînement complet à {full_total} "
        "devient ainsi un réglage fin qui tient sur une seule carte de 24 Go, pourvu que les "
        "activations restent contenues (lots modestes, recalcul des activations).",
        EN: "With LoRA, the model's weights are frozen: they keep their memory ({frozen_formula} "
        "in 16 bits) but have no gradient and no optimizer state. Those exist only for the small "
        "added matrices, well under 1% of the parameters: even at 16 bytes each, 1% of {params} "
        "billion is only {adapters}. The {full_total} full fine-tune thus becomes one that fits on "
        "a single 24 GB card, provided activations stay contained (modest batches, activation "
        "checkpointing).",
    },
    "web.sisters_title": {FR: "Calculateurs associés", EN: "Related calculators"},
    "web.sister.inference": {
        FR: "Calculateur de VRAM pour l'inférence", EN: "VRAM calculator for inference"
    },
    "web.sister.lora": {FR: "Calculateur de paramètres LoRA", EN: "LoRA parameter calculator"},
    "web.coming": {FR: "bientôt disponible", EN: "coming soon"},
    # --- FAQ ----------------------------------------------------------------------------------
    "web.faq": {FR: "Questions fréquentes (FAQ)", EN: "Frequently asked questions (FAQ)"},
    "web.faq1_q": {
        FR: "Pourquoi faut-il autant de mémoire pour entraîner un modèle ?",
        EN: "Why does training a model take so much memory?",
    },
    "web.faq1_a": {
        FR: "Pour faire tourner un modèle, il suffit de ses poids (2 octets par paramètre en "
        "16 bits). Pour l'entraîner, il faut aussi ses gradients, une copie maîtresse en fp32 et "
        "les états de l'optimiseur : avec Adam en précision mixte, 16 octets par paramètre, soit "
        "huit fois plus, avant même les activations.",
        EN: "Running a model needs only its weights (2 bytes per parameter in 16 bits). Training "
        "it also needs its gradients, an fp32 master copy and the optimizer states: with Adam in "
        "mixed precision, 16 bytes per parameter, eight times more, before any activations.",
    },
    "web.faq2_q": {
        FR: "Comment connaître la mémoire d'activations ?",
        EN: "How do I know the activation memory?",
    },
    "web.faq2_a": {
        FR: "Elle dépend de la taille de lot, de la longueur de séquence, de l'architecture et de "
        "l'implémentation. Le plus sûr est de la mesurer sur une vraie étape d'entraînement "
        "avec un "
        "petit lot, puis de l'extrapoler : elle croît à peu près proportionnellement au nombre de "
        "jetons par lot.",
        EN: "It depends on the batch size, the sequence length, the architecture and the "
        "implementation. The safest way is to measure it on a real training step with a small "
        "batch, then extrapolate: it grows roughly in proportion to the number of tokens per "
        "batch.",
    },
    "web.faq3_q": {
        FR: "Mon modèle ne tient pas sur mon GPU : que faire ?",
        EN: "My model does not fit on my GPU: what can I do?",
    },
    "web.faq3_a": {
        FR: "Par ordre d'effort : réduire la taille de lot et recalculer les activations, passer "
        "à un optimiseur 8 bits, entraîner des adaptateurs LoRA (ou QLoRA, sur un modèle quantifié "
        "en 4 bits) plutôt que tous les poids, ou répartir les états du modèle sur plusieurs GPU "
        "(ZeRO, FSDP).",
        EN: "In order of effort: shrink the batch and checkpoint activations, switch to an 8-bit "
        "optimizer, train LoRA adapters (or QLoRA, on a model quantized to 4 bits) rather than "
        "all the weights, or shard the model states across several GPUs (ZeRO, FSDP).",
    },
    # --- Mentions légales ---------------------------------------------------------------------
    "web.legal": {FR: "Mentions légales", EN: "Legal notice"},
    "web.legal_text": {
        FR: "Ce calculateur donne une estimation de premier ordre, à titre indicatif et sans "
        "garantie. Il ne compte ni les tampons temporaires, ni les allocations du framework "
        "(contexte CUDA, cache de l'allocateur), ni le surcoût de communication entre GPU. "
        "Vérifiez toujours sur une vraie étape d'entraînement avant d'engager du matériel ou un "
        "budget. Les calculs sont faits sur ce serveur ; la page ne dépose aucun cookie et "
        "n'envoie "
        "aucune donnée ailleurs.",
        EN: "This calculator gives a first-order estimate, for guidance only and without "
        "warranty. It counts neither temporary buffers, nor framework allocations (CUDA context, "
        "allocator cache), nor the communication overhead between GPUs. Always check on a real "
        "training step before committing hardware or budget. The computation runs on this "
        "server; the page sets no cookie and sends no data anywhere else.",
    },
    "web.lower_bound": {
        FR: "* Borne basse : le total réparti également entre les cartes, sans surcoût de "
        "partitionnement.",
        EN: "* Lower bound: the total split evenly across the cards, with no sharding overhead.",
    },
    # --- API documentation page and errors ----------------------------------------------------
    "web.api_docs_title": {FR: "API JSON de vramplan", EN: "vramplan JSON API"},
    "web.not_found_title": {FR: "Page introuvable", EN: "Page not found"},
    "web.back_home": {FR: "Retour au calculateur", EN: "Back to the calculator"},
    "error.not_found": {
        FR: "aucune ressource à l'adresse « {value} » ; {accepted}",
        EN: "nothing at '{value}'; {accepted}",
    },
    "error.method_not_allowed": {
        FR: "la méthode HTTP {value} n'est pas acceptée à cette adresse ; {accepted}",
        EN: "HTTP method {value} is not allowed at this address; {accepted}",
    },
    "error.unknown_field": {
        FR: "{field} : champ inconnu ; champs acceptés : {choices}",
        EN: "{field}: unknown field; accepted fields: {choices}",
    },
    "error.not_json": {
        FR: "{field} : le corps n'est pas un objet JSON valide ; {accepted}",
        EN: "{field}: the body is not a valid JSON object; {accepted}",
    },
    "accepted.body": {
        FR: "envoyez un objet JSON comme {{\"params\": 7, \"activations\": 20}}",
        EN: "send a JSON object such as {{\"params\": 7, \"activations\": 20}}",
    },
    "accepted.path": {
        FR: "voir /api/docs pour les adresses de l'API",
        EN: "see /api/docs for the API's addresses",
    },
    "accepted.http_method": {FR: "voir /api/docs", EN: "see /api/docs"},
    "accepted.port": {
        FR: "indiquez un port TCP entier de 1 à 65 535 (par exemple 8000)",
        EN: "give a whole TCP port from 1 to 65,535 (e.g. 8000)",
    },
    # --- `vramplan serve` ---------------------------------------------------------------------
    "help.serve": {
        FR: "sert le calculateur web et l'API JSON (par défaut http://127.0.0.1:8000)",
        EN: "serve the web calculator and the JSON API (default http://127.0.0.1:8000)",
    },
    "help.host": {
        FR: "adresse d'écoute (par défaut 127.0.0.1)", EN: "address to listen on (default "
        "127.0.0.1)"
    },
    "help.port": {FR: "port TCP (par défaut 8000)", EN: "TCP port (default 8000)"},
    "serve.listening": {
        FR: "Calculateur sur http://{host}:{port}/ (anglais : /en/, API : /api/docs) — Ctrl+C "
        "pour arrêter",
        EN: "Calculator at http://{host}:{port}/ (English: /en/, API: /api/docs) — Ctrl+C to stop",
    },
    "serve.public": {
        FR: "attention : {host} n'est pas l'adresse de bouclage ; le calculateur sera joignable "
        "depuis d'autres machines du réseau",
        EN: "warning: {host} is not a loopback address; the calculator will be reachable from "
        "other machines on the network",
    },
    "error.body_too_large": {
        FR: "{field} : la requête dépasse {limit} ; envoyez les champs du calculateur, ou un "
        "config.json, qui tiennent en quelques kilo-octets",
        EN: "{field}: the request is over {limit}; send the calculator's fields, or a "
        "config.json, which take a few kilobytes",
    },
    "error.internal": {
        FR: "erreur inattendue du serveur ; elle est consignée. Réessayez, ou signalez-la avec "
        "la requête",
        EN: "unexpected server error; it is logged. Try again, or report it with the request",
    },
}
