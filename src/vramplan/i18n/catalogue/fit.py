"""Messages of `vramplan fit`: sharding, verdicts with a margin, inverse solving, changes."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- help ------------------------------------------------------------------------------------
    "help.fit": {
        FR: "Est-ce que ça tient ? Mémoire par GPU d'un entraînement sur N GPU (DDP, ZeRO, FSDP, "
        "déchargement), marge de sécurité, plus grand lot, moins de GPU, et quoi changer.",
        EN: "Will it fit? Per-GPU memory of a training run on N GPUs (DDP, ZeRO, FSDP, offload), "
        "with a safety margin, the largest batch, the fewest GPUs, and what to change.",
    },
    "help.fit_examples": {
        FR: "exemples :\n"
        "  vramplan fit --model llama-2-7b --gpu a100-80gb --batch 4 --seq-len 2048\n"
        "  vramplan fit --model llama-2-13b --method lora --gpu a100-40gb --gpus 4 "
        "--sharding fsdp --framework litgpt --checkpointing full --json",
        EN: "examples:\n"
        "  vramplan fit --model llama-2-7b --gpu a100-80gb --batch 4 --seq-len 2048\n"
        "  vramplan fit --model llama-2-13b --method lora --gpu a100-40gb --gpus 4 "
        "--sharding fsdp --framework litgpt --checkpointing full --json",
    },
    "help.fit_training": {
        FR: "réglages d'entraînement, mêmes valeurs que le format des cas mesurés",
        EN: "training settings, same values as the measured-case format",
    },
    # --- errors ----------------------------------------------------------------------------------
    # --- report ----------------------------------------------------------------------------------
    "fit.title": {
        FR: "Est-ce que ça tient ? {model} sur {gpus} × {gpu}, {sharding}",
        EN: "Will it fit? {model} on {gpus} × {gpu}, {sharding}",
    },
    "fit.setup": {
        FR: "{method}, {precision}, {optimizer}, lot {batch} × {seq_len} jetons, "
        "checkpointing {checkpointing}, attention {attention}, cadre {framework}",
        EN: "{method}, {precision}, {optimizer}, batch {batch} × {seq_len} tokens, "
        "checkpointing {checkpointing}, attention {attention}, framework {framework}",
    },
    "fit.unquantized": {
        FR: "checkpoint 4 bits : {count} couches linéaires des blocs gardées en 16 bits "
        "(llm_int8_skip_modules)",
        EN: "4-bit checkpoint: {count} block linears kept in 16 bits (llm_int8_skip_modules)",
    },
    "fit.tiled_mlp": {
        FR: "MLP par tuiles, {tokens} jetons à la fois",
        EN: "MLP run in tiles, {tokens} tokens at a time",
    },
    "fit.per_gpu": {
        FR: "Mémoire par GPU au pic (phase {phase}, mesure {metric}) :",
        EN: "Memory per GPU at the peak (phase {phase}, metric {metric}):",
    },
    "fit.total": {FR: "total par GPU", EN: "total per GPU"},
    "fit.allocator": {
        FR: "allocateur et contexte CUDA", EN: "allocator and CUDA context",
    },
    "fit.nccl": {
        FR: "communicateurs NCCL (hors PyTorch)", EN: "NCCL communicators (outside PyTorch)",
    },
    "fit.host": {
        FR: "Mémoire hôte par nœud pour le déchargement : {host} (dont épinglée : {pinned})",
        EN: "Host memory per node for offload: {host} (pinned: {pinned})",
    },
    "fit.fits": {
        FR: "Ça tient : {peak} sur {usable} utilisables ({share} % de {capacity}).",
        EN: "It fits: {peak} of {usable} usable ({share}% of {capacity}).",
    },
    "fit.fits_tight": {
        FR: "Ça tient de justesse, au-delà de la marge : {peak} pour {usable} utilisables "
        "({share} % de {capacity}) ; risque de manque de mémoire.",
        EN: "It fits only beyond the margin: {peak} for {usable} usable ({share}% of "
        "{capacity}); it may run out of memory.",
    },
    "fit.does_not_fit": {
        FR: "Ça ne tient pas : {peak} pour {usable} utilisables ({share} % de {capacity}).",
        EN: "It does not fit: {peak} for {usable} usable ({share}% of {capacity}).",
    },
    "fit.margin_source": {
        FR: "Marge : sous 80 % de la mémoire estimée, aucun manque de mémoire sur 454 "
        "entraînements (Fujii et al. 2024, arXiv:2411.06465).",
        EN: "Margin: below 80% of memory as estimated, no out-of-memory error in 454 training "
        "runs (Fujii et al. 2024, arXiv:2411.06465).",
    },
    "fit.max_batch": {FR: "Plus grand micro-lot qui tient : {value}",
                      EN: "Largest micro-batch that fits: {value}"},
    "fit.max_seq_len": {FR: "Plus longue séquence qui tient : {value}",
                        EN: "Longest sequence that fits: {value}"},
    "fit.max_completion_len": {FR: "Plus longue complétion qui tient : {value}",
                               EN: "Longest completion that fits: {value}"},
    "fit.none_fits.max_completion_len": {FR: "aucune", EN: "none"},
    "fit.alignment": {
        FR: "{method} de TRL, politique {policy}, référence : {reference}",
        EN: "TRL {method}, policy {policy}, reference: {reference}",
    },
    "fit.generation": {
        FR: " ; génération {generation}, {completion} jetons générés par séquence, séquences "
        "générées ensemble : {sequences}",
        EN: "; generation {generation}, {completion} generated tokens per sequence, sequences "
        "generated together: {sequences}",
    },
    "fit.reference.model": {FR: "copie gelée du modèle", EN: "frozen copy of the model"},
    "fit.reference.adapter": {FR: "la politique, adaptateur désactivé",
                              EN: "the policy with its adapter disabled"},
    "fit.reference.precomputed": {FR: "log-probabilités précalculées",
                                  EN: "precomputed log-probabilities"},
    "fit.reference.none": {FR: "aucune", EN: "none"},
    "fit.phases": {FR: "Pic de chaque phase (mémoire allouée) :",
                   EN: "Peak of each phase (allocated memory):"},
    "fit.none_fits.max_batch": {FR: "aucun", EN: "none"},
    "fit.none_fits.max_seq_len": {FR: "aucune", EN: "none"},
    "fit.fewest_gpus": {
        FR: "Le moins de GPU {gpu} par schéma (même réglage d'entraînement) :",
        EN: "Fewest {gpu} GPUs per scheme (same training settings):",
    },
    "fit.col_sharding": {FR: "partage", EN: "sharding"},
    "fit.col_offload": {FR: "déchargement", EN: "offload"},
    "fit.col_gpus": {FR: "GPU", EN: "GPUs"},
    "fit.col_peak": {FR: "pic par GPU", EN: "peak per GPU"},
    "fit.more_than": {FR: "> {n}", EN: "> {n}"},
    "fit.cheapest": {
        FR: "Combinaison la moins coûteuse : {gpus} × {gpu}, {sharding}, déchargement {offload}.",
        EN: "Cheapest combination: {gpus} × {gpu}, {sharding}, offload {offload}.",
    },
    "fit.no_cheapest": {
        FR: "Aucun nombre de ces GPU ne suffit sans changer le réglage d'entraînement.",
        EN: "No number of these GPUs is enough without changing the training settings.",
    },
    "fit.changes": {
        FR: "Quoi changer (classé : ce qui fait tenir, puis le moins coûteux en qualité, en "
        "vitesse, puis le plus économe) :",
        EN: "What to change (ranked: what makes it fit, then least cost in quality, in speed, "
        "then most memory saved):",
    },
    "fit.no_changes": {FR: "Aucun changement ne réduit la mémoire.",
                       EN: "No change reduces the memory."},
    "fit.col_change": {FR: "changement", EN: "change"},
    "fit.col_detail": {FR: "réglage", EN: "setting"},
    "fit.col_new_peak": {FR: "nouveau pic", EN: "new peak"},
    "fit.col_saved": {FR: "économie", EN: "saved"},
    "fit.col_fits": {FR: "tient", EN: "fits"},
    "fit.col_speed": {FR: "vitesse", EN: "speed"},
    "fit.col_quality": {FR: "qualité", EN: "quality"},
    "fit.combined": {
        FR: "Changements combinés, appliqués l'un après l'autre :",
        EN: "Changes combined, applied one after the other:",
    },
    "fit.sources": {FR: "Sources des coûts :", EN: "Sources of the costs:"},
    "fit.notice": {
        FR: "Estimation de premier ordre : vérifiez sur un vrai pas d'entraînement "
        "(docs/sharding.md).",
        EN: "First-order estimate: check on a real training step (docs/sharding.md).",
    },
    # PyTorch's CUDA semantics notes, "Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF":
    # expandable segments "better handle cases where a job changes allocation sizes frequently,
    # such as having a changing batch size"; the simulated allocator, fed steps of lengths drawn
    # below the sequence length, keeps more cached without them and none with them
    # (docs/open-leads.md, "Steps of varying lengths, replayed")
    "fit.varying_shapes": {
        FR: "La mémoire réservée et la mémoire du GPU valent pour des pas d'une même forme : des "
        "lots dont la longueur change d'un pas à l'autre laissent davantage en cache dans "
        "PyTorch (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True le limite).",
        EN: "Reserved and device memory are for steps of one shape: batches whose length "
        "changes from step to step leave more in PyTorch's cache "
        "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True limits it).",
    },
    "fit.yes": {FR: "oui", EN: "yes"},
    "fit.no": {FR: "non", EN: "no"},
    # --- parts added by sharding ---------------------------------------------------------------
    "part.weights_per_gpu": {FR: "poids (part de ce GPU)", EN: "weights (this GPU's share)"},
    "part.comm_buffers": {
        FR: "tampons de communication (seaux de gradients)",
        EN: "communication buffers (gradient buckets)",
    },
    "part.sharding_buffers": {
        FR: "paramètres rassemblés et tampons du partage",
        EN: "gathered parameters and sharding buffers",
    },
    # --- changes --------------------------------------------------------------------------------
    "change.attention_kernel": {FR: "noyau d'attention fusionné", EN: "fused attention kernel"},
    "change.chunked_loss": {FR: "perte par morceaux", EN: "chunked loss"},
    "change.checkpointing": {FR: "checkpointing des activations",
                             EN: "activation checkpointing"},
    "change.optimizer_8bit": {FR: "optimiseur 8 bits", EN: "8-bit optimizer"},
    "change.micro_batch": {FR: "micro-lot plus petit + accumulation",
                           EN: "smaller micro-batch + accumulation"},
    "change.sharding": {FR: "étape ZeRO / FSDP", EN: "ZeRO stage / FSDP"},
    "change.offload_optimizer": {FR: "déchargement de l'optimiseur",
                                 EN: "optimizer offload"},
    "change.offload_params": {FR: "déchargement des paramètres",
                              EN: "parameter offload"},
    "change.lora": {FR: "LoRA", EN: "LoRA"},
    "change.qlora": {FR: "QLoRA", EN: "QLoRA"},
    "change.shorter_sequence": {FR: "séquences plus courtes", EN: "shorter sequences"},
    "change.shorter_completion": {FR: "complétions plus courtes", EN: "shorter completions"},
    "change.precompute_ref": {FR: "référence précalculée",
                              EN: "precomputed reference"},
    "change.vllm_sleep": {FR: "vLLM en veille entre générations",
                          EN: "vLLM asleep between generations"},
    "change.vllm_share": {FR: "part du GPU pour vLLM", EN: "vLLM's share of the GPU"},
    "speed.faster": {FR: "plus rapide", EN: "faster"},
    "speed.none": {FR: "inchangée", EN: "unchanged"},
    "speed.small": {FR: "un peu plus lent", EN: "slightly slower"},
    "speed.moderate": {FR: "plus lent", EN: "slower"},
    "speed.large": {FR: "bien plus lent", EN: "much slower"},
    "quality.none": {FR: "identique", EN: "identical"},
    "quality.negligible": {FR: "équivalente (publiée)", EN: "on par (published)"},
    "quality.task_dependent": {FR: "selon la tâche", EN: "task-dependent"},
    "quality.changes_data": {FR: "données tronquées", EN: "truncated data"},
}
