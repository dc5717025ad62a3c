"""The request vocabulary's words: each field's one-sentence description (`field.<name>`), the
noun phrase its range hint starts with (`what.<name>`), the generated hints' patterns
(`accepted.*`) and the errors of reading a request.

The CLI shows the description with the default and the hint; the API documents its parameters
with the English description; errors end with the hint.
"""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- descriptions -----------------------------------------------------------------------------
    "field.model": {
        FR: "modèle du catalogue (voir `vramplan models`), par son nom, un alias ou son "
        "identifiant Hugging Face",
        EN: "model from the registry (see `vramplan models`), by name, alias or Hugging Face "
        "repo id",
    },
    "field.config": {
        FR: "config.json Hugging Face (fichier ou dossier du modèle) au lieu d'un modèle du "
        "catalogue",
        EN: "Hugging Face config.json (file or model folder) instead of a registry model",
    },
    "field.gpu": {
        FR: "type de GPU (voir `vramplan gpus`)",
        EN: "GPU type (see `vramplan gpus`)",
    },
    "field.params": {
        FR: "nombre de paramètres N, en milliards (exclut --model)",
        EN: "parameter count N, in billions (excludes --model)",
    },
    "field.optimizer": {
        FR: "optimiseur ; adam-mixed et adam-8bit, les préréglages du calculateur de base, "
        "valent adamw et adamw-8bit",
        EN: "optimizer; adam-mixed and adam-8bit, the seed calculator's presets, mean adamw and "
        "adamw-8bit",
    },
    "field.bytes_per_param": {
        FR: "mémoire par paramètre B personnalisée, en octets (exclut --optimizer)",
        EN: "custom memory per parameter B, in bytes (excludes --optimizer)",
    },
    "field.activations": {
        FR: "mémoire d'activations A, en Go (10^9 octets)",
        EN: "activation memory A, in GB (10^9 bytes)",
    },
    "field.method": {
        FR: "ce qui est entraîné (full, freeze, lora, qlora), ou une méthode de préférence ou "
        "de RL de TRL (dpo, orpo, simpo, kto, ppo, grpo ; sa politique selon --policy)",
        EN: "what is trained (full, freeze, lora, qlora), or a TRL preference or RL method "
        "(dpo, orpo, simpo, kto, ppo, grpo; its policy as --policy says)",
    },
    "field.precision": {
        FR: "précision des poids, gradients et copies maîtresses (défaut : celle du cadre ; "
        "bf16-true, mixed pour megatron, deepspeed et torchtitan)",
        EN: "precision of weights, gradients and master copies (default: the framework's; "
        "bf16-true, mixed for megatron, deepspeed and torchtitan)",
    },
    "field.optimizer_impl": {
        FR: "implémentation du pas de l'optimiseur (défaut : celle du cadre ; fused pour le "
            "Trainer de transformers, foreach pour une boucle PyTorch)",
        EN: "how the optimizer step runs (default: the framework's; fused for transformers' "
            "Trainer, foreach for a PyTorch loop)",
    },
    "field.quant": {
        FR: "stockage des poids de base gelés sous QLoRA (défaut nf4)",
        EN: "storage of the frozen base weights under QLoRA (default nf4)",
    },
    "field.lora_r": {FR: "rang LoRA r", EN: "LoRA rank r"},
    "field.training_lora_r": {
        FR: "rang LoRA r (défaut : celui du cadre ; 16 pour Unsloth, 8 ailleurs)",
        EN: "LoRA rank r (default: the framework's; 16 for Unsloth, 8 elsewhere)",
    },
    "field.training_lora_targets": {
        FR: "modules adaptés, séparés par des virgules (noms de peft acceptés : q_proj, "
        "all-linear…) (défaut : ceux du cadre ; tous les linéaires des blocs pour Unsloth et "
        "LLaMA-Factory, q,v ailleurs)",
        EN: "adapted modules, comma-separated (peft's names accepted: q_proj, all-linear…) "
        "(default: the framework's; every linear of the blocks for Unsloth and LLaMA-Factory, "
        "q,v elsewhere)",
    },
    "field.lora_targets": {
        FR: "modules adaptés, séparés par des virgules (noms de peft acceptés : q_proj, "
        "all-linear…)",
        EN: "adapted modules, comma-separated (peft's names accepted: q_proj, all-linear…)",
    },
    "field.train_layers": {
        FR: "freeze : nombre de derniers blocs entraînés (défaut : celui du cadre ; 2 pour "
        "LLaMA-Factory, 1 ailleurs)",
        EN: "freeze: number of last blocks that train (default: the framework's; 2 for "
        "LLaMA-Factory, 1 elsewhere)",
    },
    "field.batch": {
        FR: "séquences par micro-lot (entraînement) ou simultanées (inférence)",
        EN: "sequences per micro-batch (training) or at once (inference)",
    },
    "field.seq_len": {FR: "jetons par séquence d'entraînement", EN: "tokens per training sequence"},
    "field.checkpointing": {
        FR: "recalcul des activations (défaut : celui du cadre ; chaque couche pour torchtune, "
        "Unsloth et LLaMA-Factory)",
        EN: "activation checkpointing (default: the framework's; every layer for torchtune, "
        "Unsloth and LLaMA-Factory)",
    },
    "field.attention": {FR: "noyau d'attention", EN: "attention kernel"},
    "field.loss": {
        FR: "calcul de la perte (défaut : celui du cadre)",
        EN: "how the loss is computed (default: the framework's)",
    },
    "field.framework": {
        FR: "cadre d'entraînement, pour ses réglages par défaut",
        EN: "training stack, for its defaults",
    },
    "field.metric": {
        FR: "pic lu : allocated (tenseurs), reserved (allocateur), device (nvidia-smi)",
        EN: "peak read: allocated (tensors), reserved (allocator), device (nvidia-smi)",
    },
    "field.grad_accum": {
        FR: "pas d'accumulation de gradients (défaut : celui du cadre ; litgpt accumule toujours)",
        EN: "gradient accumulation steps (default: the framework's; litgpt always accumulates)",
    },
    "field.compile": {
        FR: "le modèle tourne sous torch.compile (torchtune, torchtitan)",
        EN: "the model runs under torch.compile (torchtune, torchtitan)",
    },
    "field.empty_cache": {
        FR: "torch.cuda.empty_cache() entre les pas (l'allocateur rend ses segments libres)",
        EN: "torch.cuda.empty_cache() between steps (the allocator returns its free segments)",
    },
    "field.tiled_mlp": {
        FR: "MLP par tuiles de jetons (unsloth_tiled_mlp d'Unsloth, tiled_mlp d'axolotl)",
        EN: "MLP run over tiles of tokens (Unsloth's unsloth_tiled_mlp, axolotl's tiled_mlp)",
    },
    "field.policy": {
        FR: "dpo, orpo, simpo, kto, ppo, grpo : comment la politique s'entraîne (full, lora, "
        "qlora)",
        EN: "dpo, orpo, simpo, kto, ppo, grpo: how the policy trains (full, lora, qlora)",
    },
    "field.precompute_ref": {
        FR: "dpo, kto : log-probabilités de référence calculées avant l'entraînement "
        "(precompute_ref_log_probs de TRL)",
        EN: "dpo, kto: reference log-probabilities computed before training (TRL's "
        "precompute_ref_log_probs)",
    },
    "field.beta": {
        FR: "grpo : poids du terme KL (beta de TRL, 0 par défaut : pas de modèle de référence)",
        EN: "grpo: KL weight (TRL's beta, 0 by default: no reference model)",
    },
    "field.completion_len": {
        FR: "grpo, ppo : jetons générés par séquence, compris dans seq_len (défaut de TRL : "
        "512 pour grpo, 53 pour ppo)",
        EN: "grpo, ppo: tokens generated per sequence, part of seq_len (TRL's default: 512 "
        "for grpo, 53 for ppo)",
    },
    "field.generation": {
        FR: "grpo, ppo : qui génère (model : generate de transformers ; vllm-colocate : vLLM "
        "sur le même GPU ; vllm-server : vLLM sur d'autres GPU)",
        EN: "grpo, ppo: who generates (model: transformers' generate; vllm-colocate: vLLM on "
        "the same GPU; vllm-server: vLLM on other GPUs)",
    },
    "field.vllm_share": {
        FR: "vllm-colocate : part de la mémoire du GPU prise par vLLM "
        "(gpu_memory_utilization, 0,3 par défaut dans TRL)",
        EN: "vllm-colocate: share of the GPU's memory vLLM takes (gpu_memory_utilization, "
        "0.3 by default in TRL)",
    },
    "field.vllm_sleep": {
        FR: "vllm-colocate : vLLM libère sa mémoire entre les générations (mode veille)",
        EN: "vllm-colocate: vLLM releases its memory between generations (sleep mode)",
    },
    "field.value_adapters": {
        FR: "ppo : le modèle de valeur reçoit les adaptateurs de la politique et n'entraîne "
        "qu'eux (swift rlhf de ms-swift) ; sans cela, il s'entraîne en entier (PPOTrainer de TRL)",
        EN: "ppo: the value model gets the policy's adapters and trains only them (ms-swift's "
        "swift rlhf); without it, it trains in full (TRL's PPOTrainer)",
    },
    "field.gpus": {
        FR: "nombre de GPU (défaut : parallélisme de tenseur × de pipeline)",
        EN: "number of GPUs (default: tensor × pipeline parallelism)",
    },
    "field.gpus_per_node": {
        FR: "GPU par nœud (HSDP, mémoire hôte)",
        EN: "GPUs per node (HSDP, host memory)",
    },
    "field.sharding": {
        FR: "partage des états entre GPU (défaut : none sans parallélisme de données, celui du "
        "framework avec ; zero2 avec le déchargement de l'optimiseur, fsdp ou zero3 avec celui "
        "des paramètres)",
        EN: "how GPUs share the states (default: none without data parallelism, the framework's "
        "with it; zero2 with the optimizer offloaded, fsdp or zero3 with the parameters)",
    },
    "field.offload": {FR: "ce qui va en mémoire hôte", EN: "what lives in host memory"},
    "field.tensor_parallel": {
        FR: "parallélisme de tenseur (Megatron-LM, vLLM)",
        EN: "tensor parallelism (Megatron-LM, vLLM)",
    },
    "field.layer_split": {
        FR: "GPU sur lesquels les blocs sont placés par tranches consécutives (inférence, un seul "
        "processus) : les chiffres sont ceux du premier, qui garde aussi l'embedding et la tête",
        EN: "GPUs the blocks are placed on in consecutive chunks (inference, one process): the "
        "figures are the first one's, which also holds the embedding and the head",
    },
    "field.pipeline_parallel": {
        FR: "étages de pipeline (Megatron-LM, ordonnancement 1F1B)",
        EN: "pipeline stages (Megatron-LM, 1F1B schedule)",
    },
    "field.expert_parallel": {
        FR: "parallélisme d'experts (mélanges d'experts) : chaque GPU garde 1/N des experts de "
        "chaque couche ; un diviseur des GPU de données",
        EN: "expert parallelism (mixtures of experts): each GPU keeps 1/N of every layer's "
        "experts; a divisor of the data-parallel GPUs",
    },
    "field.margin": {
        FR: "part utilisable de la mémoire du GPU, en pourcentage (Fujii et al. 2024 ; 100 = sans "
        "marge)",
        EN: "usable share of the GPU's memory, in percent (Fujii et al. 2024; 100 = no margin)",
    },
    "field.weights": {
        FR: "format des poids : bf16, int8, nf4, gptq-4bit-g128, awq-4bit-g128, q4_k_m…",
        EN: "weight format: bf16, int8, nf4, gptq-4bit-g128, awq-4bit-g128, q4_k_m…",
    },
    "field.context": {
        FR: "jetons par séquence dans le cache : invite + génération",
        EN: "tokens per sequence in the cache: prompt + generated",
    },
    "field.prompt": {
        FR: "jetons d'invite traités au préremplissage (défaut : tout le contexte)",
        EN: "prompt tokens processed in prefill (default: the whole context)",
    },
    "field.kv_dtype": {FR: "type du cache KV", EN: "KV cache dtype"},
    "field.dtype": {
        FR: "type des activations et des tenseurs non quantifiés",
        EN: "dtype of activations and unquantized tensors",
    },
    "field.engine": {
        FR: "moteur d'inférence (défaut : generic ; llama.cpp pour GGUF)",
        EN: "inference engine (default: generic; llama.cpp for GGUF)",
    },
    "field.limits": {
        FR: "ajoute le plus long contexte et le plus grand lot qui tiennent sur chaque GPU",
        EN: "add the longest context and the largest batch that fit each GPU",
    },
    "field.images": {
        FR: "images par séquence (modèles vision-langage) : leurs jetons s'ajoutent au contexte",
        EN: "images per sequence (vision-language models): their tokens join the context",
    },
    "field.mtp": {
        FR: "charge les modules MTP du checkpoint (décodage spéculatif) : leurs poids et leur "
        "cache KV",
        EN: "load the checkpoint's MTP modules (speculative decoding): their weights and KV cache",
    },
    "field.fsdp_version": {
        FR: "la version de FSDP tracée avec sharding fsdp : fsdp2 (fully_shard) ou fsdp1",
        EN: "the FSDP a traced sharding fsdp runs: fsdp2 (fully_shard) or fsdp1",
    },
    "field.peft_wrap": {
        FR: "FSDP1 avec LoRA : la politique de peft (les adaptateurs dans leurs propres unités) ; "
        "false : les blocs comme unités (celle de litgpt)",
        EN: "FSDP1 with LoRA: peft's wrap policy (adapters in units of their own); false: the "
        "blocks as units (litgpt's)",
    },
    "field.adapters_fp32": {
        FR: "LoRA : les adaptateurs en fp32, comme get_peft_model de peft les crée par défaut sur "
        "un modèle 16 bits (chacun copie alors son entrée en fp32) ; sinon dans le type du modèle",
        EN: "LoRA: the adapters in fp32, as peft's get_peft_model makes them by default over a "
        "16-bit model (each then copies its input to fp32); else in the model's dtype",
    },
    "field.alloc_conf": {
        FR: "PYTORCH_CUDA_ALLOC_CONF de l'allocateur simulé (vide : les réglages de PyTorch)",
        EN: "PYTORCH_CUDA_ALLOC_CONF of the simulated allocator (empty: PyTorch's defaults)",
    },
    "accepted.alloc_conf": {
        FR: "donnez, séparés par des virgules, expandable_segments:True|False, "
        "max_split_size_mb:N (21 à 1048576) et roundup_power2_divisions:N (1, 2, 4 … 64), "
        "comme les écrit PYTORCH_CUDA_ALLOC_CONF",
        EN: "give, comma-separated, expandable_segments:True|False, max_split_size_mb:N (21 to "
        "1048576) and roundup_power2_divisions:N (1, 2, 4 ... 64), as PYTORCH_CUDA_ALLOC_CONF "
        "writes them",
    },
    "error.alloc_conf": {
        FR: "{field} : « {value} » n'est pas un réglage que l'allocateur simulé prend ; {accepted}",
        EN: "{field}: '{value}' is not a setting the simulated allocator takes; {accepted}",
    },
    "field.dora": {
        FR: "DoRA : un vecteur de magnitude par matrice adaptée",
        EN: "DoRA: one magnitude vector per adapted matrix",
    },
    "field.rslora": {
        FR: "rsLoRA : facteur alpha/√r (aucun changement de mémoire)",
        EN: "rsLoRA: alpha/√r scaling (no memory change)",
    },
    "field.device": {
        FR: "cpu : tenseurs factices ; cuda : aussi un vrai pas sur le GPU (poids aléatoires)",
        EN: "cpu: fake tensors; cuda: also a real step on the GPU (random weights)",
    },
    "field.default": {FR: "défaut : {default}", EN: "default: {default}"},
    # --- what a number counts (the start of its hint) ------------------------------------------
    "what.params": {FR: "le nombre de paramètres en milliards",
                    EN: "the parameter count in billions"},
    "what.bytes_per_param": {FR: "les octets par paramètre", EN: "the bytes per parameter"},
    "what.activations": {FR: "la mémoire d'activations en Go",
                         EN: "the activation memory in GB"},
    "what.lora_r": {FR: "le rang", EN: "the rank"},
    "what.train_layers": {FR: "le nombre de blocs entraînés", EN: "the number of trained blocks"},
    "what.batch": {FR: "le nombre de séquences", EN: "the number of sequences"},
    "what.seq_len": {FR: "le nombre de jetons", EN: "the number of tokens"},
    "what.grad_accum": {FR: "le nombre de pas", EN: "the number of steps"},
    "what.beta": {FR: "le poids du terme KL", EN: "the KL weight"},
    "what.vllm_share": {FR: "une fraction de la mémoire du GPU",
                        EN: "a fraction of the GPU's memory"},
    "what.completion_len": {FR: "le nombre de jetons générés",
                            EN: "the number of generated tokens"},
    "what.gpus": {FR: "le nombre de GPU", EN: "the number of GPUs"},
    "what.gpus_per_node": {FR: "le nombre de GPU par nœud", EN: "the number of GPUs per node"},
    "what.tensor_parallel": {FR: "le nombre de GPU du parallélisme de tenseur",
                             EN: "the number of tensor-parallel GPUs"},
    "what.pipeline_parallel": {FR: "le nombre d'étages", EN: "the number of stages"},
    "what.expert_parallel": {FR: "le nombre de GPU entre lesquels les experts sont répartis",
                             EN: "the number of GPUs the experts are split over"},
    "what.margin": {FR: "un pourcentage", EN: "a percentage"},
    "what.context": {FR: "le contexte en jetons (invite + génération)",
                     EN: "the context in tokens (prompt + generated)"},
    "what.prompt": {FR: "les jetons d'invite", EN: "the prompt tokens"},
    "what.images": {FR: "le nombre d'images par séquence", EN: "the number of images per sequence"},
    "what.port": {FR: "le port TCP", EN: "the TCP port"},
    # --- hints, generated from ranges and choices ------------------------------------------------
    "accepted.whole": {
        FR: "indiquez {what}, un nombre entier de {minimum} à {maximum}",
        EN: "give {what}, a whole number from {minimum} to {maximum}",
    },
    "accepted.decimal": {
        FR: "indiquez {what}, de {minimum} à {maximum}",
        EN: "give {what}, from {minimum} to {maximum}",
    },
    "accepted.decimal_above": {
        FR: "indiquez {what}, plus de {minimum} et au plus {maximum}",
        EN: "give {what}, more than {minimum} and at most {maximum}",
    },
    "accepted.example": {FR: " (par exemple {example})", EN: " (e.g. {example})"},
    "accepted.or": {FR: " ou ", EN: " or "},
    "accepted.one_of": {FR: "valeurs acceptées : {choices}", EN: "accepted: {choices}"},
    "accepted.list_of": {
        FR: "une ou plusieurs valeurs parmi {choices}, séparées par des virgules, sans doublon",
        EN: "one or more of {choices}, comma-separated, without repeats",
    },
    "accepted.flag": {
        FR: "true ou false (aussi 1/0, yes/no, on/off)",
        EN: "true or false (also 1/0, yes/no, on/off)",
    },
    "accepted.gpu": {
        FR: "donnez un GPU de `vramplan gpus` (par exemple h100-80gb ou rtx-4090)",
        EN: "give a GPU from `vramplan gpus` (e.g. h100-80gb or rtx-4090)",
    },
    "accepted.config": {
        FR: "donnez le chemin d'un config.json ou du dossier d'un modèle qui en contient un",
        EN: "give the path of a config.json or of a model folder holding one",
    },
    "accepted.see_help": {
        FR: "voir `vramplan --help` ou /api/docs",
        EN: "see `vramplan --help` or /api/docs",
    },
    # --- errors of reading a request -----------------------------------------------------------
    "error.not_a_flag": {
        FR: "{field} : « {value} » n'est ni vrai ni faux ; {accepted}",
        EN: "{field}: '{value}' is neither true nor false; {accepted}",
    },
    "error.not_text": {
        FR: "{field} : {value} n'est pas un nom ; {accepted}",
        EN: "{field}: {value} is not a name; {accepted}",
    },
    "error.empty_list_item": {
        FR: "{field} : « {value} » contient un nom vide ; {accepted}",
        EN: "{field}: '{value}' holds an empty name; {accepted}",
    },
    "error.repeated_list_item": {
        FR: "{field} : « {value} » répète un nom ; {accepted}",
        EN: "{field}: '{value}' repeats a name; {accepted}",
    },
    "error.no_seed_figure": {
        FR: "{field} : la règle de base n'a pas de chiffre pour {value} ; donnez la mémoire par "
        "paramètre ({other}) ou utilisez `vramplan fit`, qui modélise {value}",
        EN: "{field}: the seed rule has no figure for {value}; give the memory per parameter "
        "({other}) or use `vramplan fit`, which models {value}",
    },
    "error.needs_method": {
        FR: "{field} {value} ne s'applique qu'avec {other} {methods} ; retirez {field} ou "
        "changez {other}",
        EN: "{field} {value} applies only with {other} {methods}; leave {field} out or change "
        "{other}",
    },
    "error.needs_generation": {
        FR: "{field} {value} ne s'applique qu'avec {other} {generation} ; retirez {field} ou "
        "donnez {other} {generation}",
        EN: "{field} {value} applies only with {other} {generation}; leave {field} out or "
        "give {other} {generation}",
    },
    "error.not_trl": {
        FR: "{field} {value} est modélisé comme le lancent les entraîneurs de TRL ; donnez "
        "{other} parmi {frameworks}",
        EN: "{field} {value} is modelled as TRL's trainers run it; give {other} among "
        "{frameworks}",
    },
    "error.tp_heads": {
        FR: "{field} : {value} ne divise pas les {heads} têtes d'attention du modèle ; donnez un "
        "diviseur de {heads}",
        EN: "{field}: {value} does not divide the model's {heads} attention heads; give a "
        "divisor of {heads}",
    },
    "error.pp_layers": {
        FR: "{field} : {value} étages pour {layers} couches ; donnez au plus {layers}",
        EN: "{field}: {value} stages for {layers} layers; give at most {layers}",
    },
    "error.conflict.gpus_multiple": {
        FR: "{field} : {value} GPU ne contiennent pas un nombre entier de copies d'un modèle "
        "réparti sur {model_parallel} GPU (tenseur × pipeline) ; donnez un multiple de "
        "{model_parallel}",
        EN: "{field}: {value} GPUs do not hold a whole number of copies of a model split over "
        "{model_parallel} GPUs (tensor × pipeline); give a multiple of {model_parallel}",
    },
    "error.conflict.experts_split": {
        FR: "{field} : {value} GPU d'experts ne divisent pas les {data_parallel} GPU du "
        "parallélisme de données ; donnez un diviseur de {data_parallel} (ou changez {other})",
        EN: "{field}: {value} expert-parallel GPUs do not divide the {data_parallel} "
        "data-parallel GPUs; give a divisor of {data_parallel} (or change {other})",
    },
    "error.conflict.no_experts": {
        FR: "{field} {value} : le modèle n'est pas un mélange d'experts ; donnez 1, ou un modèle "
        "à experts ({other} qwen3-30b-a3b, deepseek-v3…)",
        EN: "{field} {value}: the model is not a mixture of experts; give 1, or a model with "
        "experts ({other} qwen3-30b-a3b, deepseek-v3...)",
    },
    "error.conflict.learned_positions": {
        FR: "{field} {value} : le modèle apprend une table de {positions} positions ; au-delà, "
        "aucun jeton n'a de position et le modèle échoue ; donnez au plus {positions}",
        EN: "{field} {value}: the model learns a table of {positions} positions; past it no "
        "token has a position and the model fails; give at most {positions}",
    },
    "error.conflict.no_vision": {
        FR: "{field} {value} : le modèle n'a pas de tour de vision ; donnez 0, ou un modèle "
        "vision-langage ({other} gemma-3-4b, llama-4-scout…)",
        EN: "{field} {value}: the model has no vision tower; give 0, or a vision-language model "
        "({other} gemma-3-4b, llama-4-scout...)",
    },
    "error.conflict.units_differ": {
        FR: "{field} : {value} dit son unité, qui n'est pas celle de la colonne {other} "
        "({unit}) ; gardez une seule unité (videz {other}, ou retirez l'unité de {field})",
        EN: "{field}: {value} states its unit, which is not the {other} cell's ({unit}); keep "
        "one unit (empty {other}, or drop the unit from {field})",
    },
    "error.conflict.layer_split_even": {
        FR: "{field} {value} : les {layers} blocs du modèle ne se partagent pas en tranches "
        "égales ; donnez un diviseur de {layers}",
        EN: "{field} {value}: the model's {layers} blocks do not split into equal chunks; give "
        "a divisor of {layers}",
    },
    "error.conflict.no_mtp": {
        FR: "{field} : le checkpoint du modèle n'a pas de module MTP ; retirez {field}, ou donnez "
        "un modèle qui en a ({other} deepseek-v3, glm-4.5…)",
        EN: "{field}: the model's checkpoint has no MTP module; drop {field}, or give a model "
        "that has one ({other} deepseek-v3, glm-4.5...)",
    },
    "error.conflict.one_copy": {
        FR: "{field} none garde une seule copie des états, mais {gpus} GPU en font {copies} ; "
        "donnez ddp, un étage ZeRO ou fsdp",
        EN: "{field} none keeps one copy of the states, but {gpus} GPUs make {copies}; give "
        "ddp, a ZeRO stage or fsdp",
    },
    "error.conflict.hsdp_model_parallel": {
        FR: "{field} hsdp ne se combine pas avec le parallélisme de tenseur ou de pipeline",
        EN: "{field} hsdp does not combine with tensor or pipeline parallelism",
    },
    "error.conflict.hsdp_nodes": {
        FR: "{field} : hsdp partage au sein d'un nœud de {per_node} GPU et réplique entre les "
        "nœuds ; donnez un multiple de {per_node} (ou {other})",
        EN: "{field}: hsdp shards within a node of {per_node} GPUs and replicates across nodes; "
        "give a multiple of {per_node} (or {other})",
    },
    "error.conflict.offload_params": {
        FR: "{field} {value} décharge des paramètres partagés : il faut {other} zero3, fsdp, "
        "fsdp-grad-op ou hsdp (pas {scheme})",
        EN: "{field} {value} offloads sharded parameters: it needs {other} zero3, fsdp, "
        "fsdp-grad-op or hsdp (not {scheme})",
    },
    "error.conflict.offload_optimizer": {
        FR: "{field} {value} est ZeRO-Offload de DeepSpeed : il faut {other} zero1, zero2 ou "
        "zero3 (pas {scheme}) ; FSDP décharge paramètres et optimiseur ensemble "
        "(params-optimizer)",
        EN: "{field} {value} is DeepSpeed's ZeRO-Offload: it needs {other} zero1, zero2 or "
        "zero3 (not {scheme}); FSDP offloads parameters and optimizer together "
        "(params-optimizer)",
    },
    "error.repeated_parameter": {
        FR: "{field} est donné plusieurs fois ; donnez-le une seule fois",
        EN: "{field} is given more than once; give it once",
    },
    "error.conflict.model_twice": {
        FR: "le modèle est donné deux fois ({name} et {field} {value}) ; donnez-le une fois",
        EN: "the model is given twice ({name} and {field} {value}); give it once",
    },
    "error.too_many_tokens": {
        FR: "{field} : {batch} × {field} font {tokens} jetons à la fois, plus que {maximum} ; "
        "donnez une séquence plus courte ou un lot plus petit",
        EN: "{field}: {batch} × {field} make {tokens} tokens at once, over {maximum}; give a "
        "shorter sequence or a smaller batch",
    },
}
